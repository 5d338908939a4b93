"""The batching helpers every batched scorer shares (capeval.backbones.common): padding region arrays, building
batches ahead in a thread, and cutting inputs into length-sorted batches, each pinned to exact values."""

import threading
import time

import numpy as np
import pytest
import torch

from capeval.backbones.common import length_batches, pad_rows, prefetched, token_budget_batches


def test_pad_rows_keeps_float32_values_exact_and_pads_with_zeros():
    third = np.float32([[1 / 3, 2.0], [5.0, -1.5]])
    tenth = np.float16([[0.1, 7.0]])
    exact = float(np.float32(1 / 3))  # float32 inputs are padded in float32, never through fp16
    values, mask = pad_rows([third[:1], third])
    assert values.dtype == torch.float32 and mask.dtype == torch.int64
    assert values.tolist() == [[[exact, 2.0], [0.0, 0.0]], [[exact, 2.0], [5.0, -1.5]]] and mask.tolist() == [[1, 0], [1, 1]]
    values, mask = pad_rows([third, tenth])  # mixed: float32
    assert values.tolist() == [[[exact, 2.0], [5.0, -1.5]], [[float(np.float16(0.1)), 7.0], [0.0, 0.0]]]
    halves, mask = pad_rows([tenth[:0], tenth], dtype=torch.float16)  # all fp16, and an empty row
    assert halves.dtype == torch.float16 and halves.tolist() == [[[0.0, 0.0]], [[float(np.float16(0.1)), 7.0]]]
    assert mask.tolist() == [[0], [1]]


def test_prefetched_builds_two_batches_ahead_and_raises_at_the_failing_one():
    taken = []

    def batches():
        for batch in range(5):
            taken.append(batch)
            yield batch

    def build(batch):
        if batch == 3:
            raise ValueError("batch 3 cannot be built")
        return batch * 10

    built = prefetched(batches(), build)
    assert next(built) == (0, 0) and taken == [0, 1, 2], "two later batches are under way when the first is ready"
    assert next(built) == (1, 10) and next(built) == (2, 20) and taken == [0, 1, 2, 3, 4]
    with pytest.raises(ValueError, match="batch 3 cannot be built"):
        next(built)
    taken.clear()
    unbuffered = prefetched(batches(), lambda batch: -batch, ahead=0)
    assert next(unbuffered) == (0, 0) and taken == [0]
    assert list(unbuffered) == [(1, -1), (2, -2), (3, -3), (4, -4)]


def test_prefetched_builds_one_batch_at_a_time():
    lock, running, most = threading.Lock(), [0], [0]

    def build(batch):
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        time.sleep(0.01)
        with lock:
            running[0] -= 1
        return batch

    assert list(prefetched(range(6), build, ahead=4)) == [(batch, batch) for batch in range(6)]
    assert most == [1], "builds share one thread: they never run at the same time"


def test_length_batches_sort_longest_or_shortest_first():
    lengths = {"a": 3, "b": 1, "c": 4, "d": 1, "e": 2}
    assert length_batches(list(lengths), 2, lengths.__getitem__) == [["c", "a"], ["e", "b"], ["d"]]
    assert length_batches(list(lengths), 2, lengths.__getitem__, longest_first=False) == [["b", "d"], ["e", "a"], ["c"]]
    assert length_batches([], 2, len) == []


def test_token_budget_batches_pack_up_to_the_budget_exactly():
    # A batch of n items costs n × (longest text + most regions).
    lengths = {"long": (40, 36), "mid": (20, 36), "short": (3, 36), "tiny": (2, 10), "wide": (3, 50)}
    assert token_budget_batches(list(lengths), 112, lengths.__getitem__) == [["long"], ["mid"], ["wide", "short"], ["tiny"]]
    # 2 × (20 + 36) = 112: a batch may fill the budget exactly; one token less and "short" goes on alone.
    assert token_budget_batches(["mid", "short"], 112, lengths.__getitem__) == [["mid", "short"]]
    assert token_budget_batches(["mid", "short"], 111, lengths.__getitem__) == [["mid"], ["short"]]
    # Shortest first: "wide" would widen the regions of [tiny, short] to 50 (3 × 53 > 110), so it starts a batch.
    assert token_budget_batches(list(lengths), 110, lengths.__getitem__, longest_first=False) == [
        ["tiny", "short"], ["wide"], ["mid"], ["long"]]
    assert token_budget_batches([], 10, lengths.__getitem__) == []
