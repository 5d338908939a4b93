"""CUDA graphs for forward passes of fixed-shape batches: the kernels of one forward pass are captured once per input
shape and replayed, so that a batch costs one launch instead of one per operation (hundreds per forward pass of a
transformer, each with its Python dispatch). Inputs are copied into the graph's own input tensors and the output is
the graph's own output tensor, valid until the next call."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

import torch

#: Shapes captured per :class:`CapturedGraphs` at most; a batch of any further shape runs eagerly.
MAX_GRAPHS = 16


@dataclass
class _Graph:
    graph: Any  # torch.cuda.CUDAGraph
    inputs: list[torch.Tensor | None]
    output: torch.Tensor


def signature(inputs: Sequence[torch.Tensor | None]) -> tuple:
    """What a captured graph is specialised to: each input's shape and dtype (``None`` for an absent input).

    >>> signature([torch.zeros(2, 3), None, torch.zeros(4, dtype=torch.long)])
    (((2, 3), torch.float32), None, ((4,), torch.int64))
    """
    return tuple(None if value is None else (tuple(value.shape), value.dtype) for value in inputs)


class CapturedGraphs:
    """``function(*inputs)`` (CUDA tensors, or ``None``, in; one tensor out) replayed from one captured CUDA graph per
    input :func:`signature`, at most ``max_graphs`` of them (further signatures run eagerly). ``function`` must be
    capturable: no synchronisation with the host, no output whose shape depends on the values. Every graph draws
    on one memory pool, so an output is valid only until the next call (copy it out before)."""

    def __init__(self, function: Callable[..., torch.Tensor], *, max_graphs: int = MAX_GRAPHS, warmups: int = 2):
        self.function = function
        self.max_graphs = max_graphs
        self.warmups = warmups
        self._graphs: dict[tuple, _Graph] = {}
        self._pool: Any = None

    def __len__(self) -> int:
        """The number of graphs captured so far."""
        return len(self._graphs)

    def __call__(self, *inputs: torch.Tensor | None) -> torch.Tensor:
        key = signature(inputs)
        captured = self._graphs.get(key)
        if captured is None:
            if len(self._graphs) >= self.max_graphs:
                return self.function(*inputs)
            captured = self._graphs[key] = self._capture(inputs)
        else:
            for static, value in zip(captured.inputs, inputs):
                if static is not None and value is not None:
                    static.copy_(value, non_blocking=True)
        captured.graph.replay()
        return captured.output

    def _capture(self, inputs: Sequence[torch.Tensor | None]) -> _Graph:
        static = [None if value is None else value.clone() for value in inputs]
        # Warm-up runs on a side stream (as torch.cuda.graph requires): kernels chosen, workspaces allocated.
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(self.warmups):
                self.function(*static)
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        # thread_local: a batch being built meanwhile in another thread may pin host memory.
        with torch.cuda.graph(graph, pool=self._pool, capture_error_mode="thread_local"):
            output = self.function(*static)
        self._pool = graph.pool()
        return _Graph(graph, static, output)
