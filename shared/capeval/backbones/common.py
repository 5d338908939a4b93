"""Pieces every ported backbone and batched scorer needs: reading released state dicts, sorting inputs into
length batches (of a fixed count or a token budget), and padding ids or per-image region arrays into a batch with a mask."""

from __future__ import annotations

import os
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Callable, Iterable, Iterator, Sequence, TypeVar

import numpy as np
import torch

from ..checkpoints import resolve_checkpoint
from ..models import ModelUnavailableError

T = TypeVar("T")
U = TypeVar("U")


def read_state_dict(source: str | os.PathLike, *, what: str, entry: str | None = None,
                    optional_entry: bool = False) -> dict[str, torch.Tensor]:
    """The tensors of a released ``torch.save`` checkpoint (a local path or a URL, cached); with ``entry``, those of
    the checkpoint's ``entry`` item (e.g. ``"state_dict"`` beside training state), or, with ``optional_entry``, of
    the checkpoint itself where it has no such item.

    Loaded with ``weights_only=True`` (no code from the file runs). Legacy TensorFlow-style
    LayerNorm names ``gamma``/``beta`` become ``weight``/``bias``, as the original loaders do.
    """
    path = resolve_checkpoint(source, what=what)
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as error:  # torch raises many types for a corrupt or non-torch file
        raise ModelUnavailableError(f"The {what} {str(path)!r} is not a readable torch checkpoint ({type(error).__name__}: {error})") from error
    if entry is not None and not (optional_entry and isinstance(state, dict) and entry not in state):
        if not isinstance(state, dict) or entry not in state:
            raise ModelUnavailableError(f"The {what} {str(path)!r} holds no {entry!r} entry")
        state = state[entry]
    if not isinstance(state, dict) or not all(isinstance(v, torch.Tensor) for v in state.values()):
        raise ModelUnavailableError(f"The {what} {str(path)!r} is not a state dict of tensors")
    return {key.replace("gamma", "weight").replace("beta", "bias"): value for key, value in state.items()}


def load_checked(model: torch.nn.Module, state: dict[str, torch.Tensor], *, what: str) -> None:
    """Load ``state`` into ``model``, raising on any missing, unexpected or wrongly shaped key."""
    expected = model.state_dict()
    missing = sorted(set(expected) - set(state))
    unexpected = sorted(set(state) - set(expected))
    mismatched = sorted(k for k in set(state) & set(expected) if state[k].shape != expected[k].shape)
    if missing or unexpected or mismatched:
        details = "; ".join(f"{label}: {keys[:8]}{' …' if len(keys) > 8 else ''}"
                            for label, keys in (("missing", missing), ("unexpected", unexpected), ("wrong shape", mismatched)) if keys)
        raise ModelUnavailableError(f"The {what} does not match the expected layout ({details})")
    model.load_state_dict(state)


def pad_rows(arrays: Sequence[np.ndarray], *, dtype: torch.dtype = torch.float32) -> tuple[torch.Tensor, torch.Tensor]:
    """Stack N_i × D arrays into a zero-padded B × max(N_i) × D tensor and a B × max(N_i) 0/1 mask.

    The batch is assembled in numpy and handed to torch once: a torch copy per row starts a parallel region per
    row, which costs more than the copy itself on a busy machine. Values are cast exactly (fp16 and float32 inputs).

    >>> values, mask = pad_rows([np.ones((2, 3)), np.ones((1, 3))])
    >>> tuple(values.shape), mask.tolist()
    ((2, 2, 3), [[1, 1], [1, 0]])
    """
    width = max(a.shape[0] for a in arrays)
    # fp16 arrays are padded in fp16 (half the bytes; numpy's fp16 conversion is slow) and widened by torch.
    stored = np.float16 if all(a.dtype == np.float16 for a in arrays) else np.float32
    values = np.zeros((len(arrays), width, arrays[0].shape[1]), dtype=stored)
    mask = np.zeros((len(arrays), width), dtype=np.int64)
    for row, array in enumerate(arrays):
        values[row, : array.shape[0]] = array
        mask[row, : array.shape[0]] = 1
    return torch.from_numpy(values).to(dtype), torch.from_numpy(mask)


def prefetched(batches: Iterable[T], build: Callable[[T], U], *, ahead: int = 2) -> Iterator[tuple[T, U]]:
    """``(batch, build(batch))`` for each batch, in order, with up to ``ahead`` later batches built in a background
    thread meanwhile: padding and feature copies (numpy, which releases the GIL) overlap the model's forward pass
    instead of leaving the accelerator idle. An error raised by ``build`` surfaces at its batch.

    >>> [(batch, built) for batch, built in prefetched([1, 2, 3], lambda b: b * 10)]
    [(1, 10), (2, 20), (3, 30)]
    """
    with ThreadPoolExecutor(max_workers=1) as pool:
        pending: deque[tuple[T, Future[U]]] = deque()
        for batch in batches:
            pending.append((batch, pool.submit(build, batch)))
            if len(pending) > ahead:
                ready, future = pending.popleft()
                yield ready, future.result()
        while pending:
            ready, future = pending.popleft()
            yield ready, future.result()


def length_batches(items: Sequence[T], size: int, length: Callable[[T], Any], *, longest_first: bool = True) -> list[list[T]]:
    """``items`` sorted by ``length`` and cut into batches of ``size``, so each padded batch wastes little.

    >>> length_batches([0, 1, 2, 3], 3, length=[2, 5, 1, 4].__getitem__)
    [[1, 3, 0], [2]]
    """
    order = sorted(items, key=length, reverse=longest_first)
    return [order[start : start + size] for start in range(0, len(order), size)]


def token_budget_batches(items: Sequence[T], budget: int, lengths: Callable[[T], tuple[int, ...]], *,
                         longest_first: bool = True) -> list[list[T]]:
    """``items`` sorted by total length and packed into batches whose padded size stays within ``budget`` tokens.

    ``lengths`` gives an item's length in each padded stream (text ids, image regions, …); a batch of n items
    pads every stream to its longest, so it costs n × Σ max(stream). An item that alone exceeds the budget gets
    a batch of its own. Long items then share small batches and short ones large batches, which a fixed count
    cannot do without wasting memory on the long ones or speed on the short ones.

    >>> token_budget_batches(["aaaa", "b", "cc", "ddd"], 6, lambda s: (len(s), 1))
    [['aaaa'], ['ddd'], ['cc', 'b']]
    """
    def key(item: T) -> tuple[int, tuple[int, ...]]:
        return sum(lengths(item)), lengths(item)

    batches: list[list[T]] = []
    batch: list[T] = []
    widths: tuple[int, ...] = ()
    for item in sorted(items, key=key, reverse=longest_first):
        item_lengths = lengths(item)
        grown = tuple(map(max, widths, item_lengths)) if batch else item_lengths
        if batch and (len(batch) + 1) * sum(grown) > budget:
            batches.append(batch)
            batch, grown = [], item_lengths
        batch.append(item)
        widths = grown
    if batch:
        batches.append(batch)
    return batches


def pad_ids(id_lists: Sequence[Sequence[int]], *, pad_id: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """Right-pad token-id lists into a B × L id tensor and its 0/1 mask.

    >>> ids, mask = pad_ids([[101, 7, 102], [101, 102]])
    >>> ids.tolist(), mask.tolist()
    ([[101, 7, 102], [101, 102, 0]], [[1, 1, 1], [1, 1, 0]])
    """
    width = max(len(ids) for ids in id_lists)
    ids = torch.full((len(id_lists), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(id_lists), width), dtype=torch.long)
    for row, seq in enumerate(id_lists):
        ids[row, : len(seq)] = torch.as_tensor(list(seq), dtype=torch.long)
        mask[row, : len(seq)] = 1
    return ids, mask


def additive_mask(mask: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """A B × L 0/1 mask as the B × 1 × 1 × L additive mask of the original BERT-era code: (1 − m)·(−10000)."""
    return (1.0 - mask[:, None, None, :].to(dtype)) * -10000.0
