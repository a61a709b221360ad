"""The global replay in shared memory: writers in several processes, readers never see a torn item."""

import multiprocessing as mp

import numpy as np
import pytest

from distrl.core.types import ArraySpec
from distrl.runtime.shared_replay import SharedReplay

SPEC = {"a": ArraySpec((3,), "float32"), "b": ArraySpec((), "int64")}


def items(start, n, partition):
    b = partition * 1_000_000 + start + np.arange(n)
    return {"a": np.repeat(b[:, None].astype(np.float32), 3, axis=1), "b": b}


def writer(replay, partition, chunks, n):
    for c in range(chunks):
        replay.add(partition, items(c * n, n, partition))


def test_sampling_is_uniform_and_skips_the_slots_written_next():
    r = SharedReplay(SPEC, partitions=2, capacity=20, window=4)
    for c in range(7):  # partition 0 wraps; partition 1 stays half full
        r.add(0, items(c * 4, 4, 0))
    r.add(1, items(0, 4, 1))
    r.add(1, items(4, 4, 1))
    rng = np.random.default_rng(0)
    got = np.concatenate([r.sample(64, rng)["b"] for _ in range(400)])
    readable = set(range(12, 28)) | {1_000_000 + i for i in range(8)}  # 16 of partition 0's 20, all 8 of partition 1's
    assert set(got.tolist()) == readable  # the oldest 4 of partition 0 sit where its next chunk goes
    counts = np.array([np.sum(got == v) for v in sorted(readable)])
    expected = got.size / len(readable)
    assert ((counts - expected) ** 2 / expected).sum() < 50  # chi-square, 23 degrees of freedom, p ~ 0.001


def test_writers_in_several_processes_lose_nothing_and_readers_see_no_torn_items():
    r = SharedReplay(SPEC, partitions=3, capacity=64, window=8)
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=writer, args=(r, p, 200, 8)) for p in range(3)]
    for p in procs:
        p.start()
    rng = np.random.default_rng(1)
    while any(p.is_alive() for p in procs):
        if r.size:
            s = r.sample(128, rng)
            np.testing.assert_array_equal(s["a"][:, 0], s["b"].astype(np.float32))  # both fields of one write
    for p in procs:
        p.join(timeout=30)
        assert p.exitcode == 0
    for p in range(3):  # each ring holds exactly its writer's last 64 items
        assert sorted(r.arrays["b"][p].tolist()) == [p * 1_000_000 + i for i in range(1600 - 64, 1600)]


def test_rejects_chunks_larger_than_the_window():
    r = SharedReplay(SPEC, partitions=1, capacity=10, window=2)
    with pytest.raises(ValueError, match="window"):
        r.add(0, items(0, 3, 0))
