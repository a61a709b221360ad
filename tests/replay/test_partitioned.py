"""The global replay in shared memory: writers in several processes, readers never see a torn item."""

import multiprocessing as mp

import numpy as np
import pytest

from distrl.core.types import ArraySpec
from distrl.replay import PartitionedReplay

SPEC = {"a": ArraySpec((3,), "float32"), "b": ArraySpec((), "int64")}


def items(start, n, partition, width=3):
    b = partition * 1_000_000 + start + np.arange(n)
    return {"a": np.repeat(b[:, None].astype(np.float32), width, axis=1), "b": b}


def writer(replay, partition, chunks, n):
    width = replay.spec["a"].shape[0]
    for c in range(chunks):
        replay.add(partition, items(c * n, n, partition, width))


def test_sampling_is_uniform_and_skips_the_slots_written_next():
    r = PartitionedReplay(SPEC, partitions=2, capacity=20, window=4)
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
    r = PartitionedReplay(SPEC, partitions=3, capacity=64, window=8)
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
    r = PartitionedReplay(SPEC, partitions=1, capacity=10, window=2)
    with pytest.raises(ValueError, match="window"):
        r.add(0, items(0, 3, 0))


def readable_in_order(r, p):
    """Partition p's items a reader may draw, oldest first (what PartitionedReplay._draw ranges over)."""
    nxt, size, _ = r.counts[p]
    if size < r.capacity:
        slots = np.arange(size)
    else:
        slots = (nxt + r.window + np.arange(r.capacity - r.window)) % r.capacity
    return {k: a[p, slots] for k, a in r.arrays.items()}


def test_save_and_load_round_trip_is_exact(tmp_path):
    r = PartitionedReplay(SPEC, partitions=2, capacity=20, window=4)
    for c in range(7):
        r.add(0, items(c * 4, 4, 0))
    r.add(1, items(0, 3, 1))
    r.save(tmp_path)
    back = PartitionedReplay(SPEC, partitions=2, capacity=20, window=4)
    back.load(tmp_path)
    np.testing.assert_array_equal(back.counts[:, :2], r.counts[:, :2])
    for k in SPEC:
        np.testing.assert_array_equal(back.arrays[k], r.arrays[k])
    with pytest.raises(ValueError, match="partitions"):
        PartitionedReplay(SPEC, partitions=3, capacity=20, window=4).load(tmp_path)


def test_saving_while_writers_write_keeps_only_whole_items(tmp_path):
    """A checkpoint taken mid-run: every item the restored replay can sample is one whole write, and each
    partition's readable items are its writer's consecutive items ending where its counters say. Items of
    1 KB, so that copying a partition takes long enough for its writer to write several times meanwhile."""
    spec = {"a": ArraySpec((256,), "float32"), "b": ArraySpec((), "int64")}
    r = PartitionedReplay(spec, partitions=3, capacity=4096, window=8)
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=writer, args=(r, p, 3000, 8)) for p in range(3)]
    for p in procs:
        p.start()
    saves = 0
    while any(p.is_alive() for p in procs) or saves == 0:
        folder = tmp_path / f"s{saves}"
        folder.mkdir()
        r.save(folder)
        back = PartitionedReplay(spec, partitions=3, capacity=4096, window=8)
        back.load(folder)
        for p in range(3):
            got = readable_in_order(back, p)
            np.testing.assert_array_equal(got["a"], np.repeat(got["b"][:, None].astype(np.float32), 256, axis=1))
            if got["b"].size:
                np.testing.assert_array_equal(np.diff(got["b"]), 1)
        saves += 1
    for p in procs:
        p.join(timeout=30)
        assert p.exitcode == 0
    assert saves >= 2


class WritesDuringTheCopy(dict):
    """The replay's arrays, with a writer's burst interleaved after the first field is read on the
    ``at``-th walk over them (``save`` walks once to allocate, then once per partition copy)."""

    def __init__(self, arrays, burst, at=2):
        super().__init__(arrays)
        self.burst, self.walks, self.at = burst, 0, at

    def items(self):
        self.walks += 1
        walk = self.walks
        for i, kv in enumerate(list(super().items())):
            yield kv
            if i == 0 and walk == self.at:
                self.burst()


def test_a_save_interleaved_with_writes_copies_the_written_slots_again(tmp_path):
    """Deterministic interleaving: five chunks (five windows) land between copying field "a" and field "b"
    of a full partition. A plain copy would pair old "a"s with new "b"s in slots a reader may draw."""
    r = PartitionedReplay(SPEC, partitions=1, capacity=64, window=8)
    for c in range(10):
        r.add(0, items(c * 8, 8, 0))
    r.arrays = WritesDuringTheCopy(r.arrays, lambda: [r.add(0, items(80 + c * 8, 8, 0)) for c in range(5)])
    r.save(tmp_path)
    back = PartitionedReplay(SPEC, partitions=1, capacity=64, window=8)
    back.load(tmp_path)
    got = readable_in_order(back, 0)
    np.testing.assert_array_equal(got["a"][:, 0], got["b"].astype(np.float32))
    np.testing.assert_array_equal(got["b"], np.arange(120 - 56, 120))  # the newest 56: all 15 chunks' end
