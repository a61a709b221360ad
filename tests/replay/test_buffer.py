import threading
import time

import numpy as np
import pytest

from distrl.core.types import ArraySpec
from distrl.replay import RateLimiter, Replay

SPEC = {"x": ArraySpec((3,), "float32"), "i": ArraySpec((), "int64")}


def items(start, n):
    i = np.arange(start, start + n)
    return {"x": np.repeat(i[:, None], 3, 1).astype(np.float32), "i": i}


def test_ring_evicts_oldest_first_and_batches_wrap():
    r = Replay.uniform(SPEC, capacity=10)
    r.add(items(0, 7))
    r.add(items(7, 6))  # wraps: items 0..2 are overwritten
    assert r.size == 10
    held = sorted(r.storage.arrays["i"].tolist())
    assert held == list(range(3, 13))
    np.testing.assert_array_equal(r.storage.arrays["x"][:, 0], r.storage.arrays["i"])


def test_trim_to_soft_capacity_removes_oldest():
    r = Replay.prioritized(SPEC, capacity=20, soft_capacity=8)
    r.add(items(0, 12), priorities=np.ones(12))
    assert r.trim() == 4
    assert r.size == 8
    drawn = np.concatenate([r.sample(32).items["i"] for _ in range(50)])
    assert drawn.min() >= 4  # items 0..3 are gone


def test_prioritized_frequencies_and_importance_weights():
    r = Replay.prioritized(SPEC, capacity=4, alpha=0.5)
    r.add(items(0, 4), priorities=np.array([1.0, 4.0, 9.0, 16.0]))
    b = r.sample(4000, beta=0.4)
    p = np.sqrt([1.0, 4.0, 9.0, 16.0]) + 0  # |p| + eps, then ** alpha
    P = p / p.sum()
    freq = np.bincount(b.items["i"], minlength=4) / 4000
    np.testing.assert_allclose(freq, P, atol=0.03)
    np.testing.assert_allclose(b.probabilities, P[b.items["i"]], rtol=1e-4)
    w = (4 * b.probabilities) ** -0.4
    np.testing.assert_allclose(b.weights, w / w.max(), rtol=1e-5)


def test_priority_update_changes_sampling():
    r = Replay.prioritized(SPEC, capacity=4)
    r.add(items(0, 4), priorities=np.ones(4))
    r.update_priorities(np.array([0, 1, 2]), np.zeros(3))
    assert set(r.sample(64).items["i"].tolist()) == {3}


def test_fifo_reads_each_item_once_in_order():
    r = Replay.fifo(SPEC, capacity=10)
    r.add(items(0, 5))
    assert r.sample(3).items["i"].tolist() == [0, 1, 2]
    r.add(items(5, 2))
    assert r.sample(4).items["i"].tolist() == [3, 4, 5, 6]


def test_checkpoint_round_trip_is_exact(tmp_path):
    r = Replay.prioritized(SPEC, capacity=16, soft_capacity=12, seed=3)
    r.add(items(0, 14), priorities=np.arange(1, 15, dtype=float))
    r.trim()
    r.sample(5)
    r.save(tmp_path)
    r2 = Replay.prioritized(SPEC, capacity=16, soft_capacity=12, seed=99)
    r2.load(tmp_path)
    assert r2.size == r.size and r2.evicted == r.evicted
    for _ in range(3):
        a, b = r.sample(8), r2.sample(8)
        np.testing.assert_array_equal(a.items["i"], b.items["i"])
        np.testing.assert_array_equal(a.weights, b.weights)
    r.add(items(100, 3), np.ones(3))
    r2.add(items(100, 3), np.ones(3))
    np.testing.assert_array_equal(r.storage.arrays["i"], r2.storage.arrays["i"])


def test_rate_limiter_blocks_and_releases():
    rl = RateLimiter(samples_per_insert=2.0, min_size_to_sample=4, error_buffer=2.0)
    assert not rl.can_sample()
    with pytest.raises(TimeoutError):
        rl.await_sample(1, timeout=0.05)
    released = []

    def learner():
        rl.await_sample(4, timeout=5.0)
        released.append(time.monotonic())

    th = threading.Thread(target=learner)
    th.start()
    time.sleep(0.05)
    assert not released  # still blocked: the buffer is too young
    rl.await_insert(5, timeout=1.0)  # 5 inserts allow 2 * (5 - 4) + 2 = 4 samples
    th.join(timeout=5.0)
    assert released
    rl.await_insert(1, timeout=1.0)  # allowance: samples 4 vs 2 * (6 - 4) = 4 -> actors may run 1 insert ahead
    with pytest.raises(TimeoutError):
        rl.await_insert(2, timeout=0.05)  # a flooding actor is held back


def test_rate_limiter_never_deadlocks_both_sides():
    rl = RateLimiter(1.0, 10, 0.0)
    with pytest.raises(TimeoutError):
        rl.await_sample(1, timeout=0.01)
    rl.await_insert(10, timeout=0.01)


def test_a_checkpoint_holds_the_written_slots_not_the_capacity(tmp_path):
    """A replay of 100k slots holding 10 items saves 10 (it used to write all 100k), restores them exactly and goes on
    as the original does; a ring that wrapped saves every slot."""
    r = Replay.uniform(SPEC, capacity=100_000, seed=1)
    r.add(items(0, 10))
    r.save(tmp_path)
    assert (tmp_path / "replay.safetensors").stat().st_size < 2_000  # 100k slots would be 3.2 MB
    q = Replay.uniform(SPEC, capacity=100_000, seed=1)
    q.load(tmp_path)
    assert q.size == 10
    np.testing.assert_array_equal(q.sample(16).items["i"], r.sample(16).items["i"])
    r.add(items(10, 5))
    q.add(items(10, 5))
    for k in SPEC:
        np.testing.assert_array_equal(q.storage.arrays[k][:15], r.storage.arrays[k][:15])
    small = Replay.uniform(SPEC, capacity=8)
    small.add(items(0, 6))
    small.add(items(6, 5))  # wrapped: all 8 slots written
    (tmp_path / "s").mkdir()
    small.save(tmp_path / "s")
    again = Replay.uniform(SPEC, capacity=8)
    again.load(tmp_path / "s")
    np.testing.assert_array_equal(again.storage.arrays["i"], small.storage.arrays["i"])


def test_a_saved_ring_of_another_capacity_is_refused(tmp_path):
    """A full ring of 8 does not load into a ring of 16 (its slot order would be wrong), nor 10 items into 8 slots."""
    full = Replay.uniform(SPEC, capacity=8)
    full.add(items(0, 6))
    full.add(items(6, 5))
    full.save(tmp_path)
    with pytest.raises(ValueError, match="not fit"):  # its counters (next 3 of 8 slots) first
        Replay.uniform(SPEC, capacity=16).load(tmp_path)
    part = Replay.uniform(SPEC, capacity=16)
    part.add(items(0, 10))
    (tmp_path / "p").mkdir()
    part.save(tmp_path / "p")
    with pytest.raises(ValueError, match="not fit"):
        Replay.uniform(SPEC, capacity=8).load(tmp_path / "p")


def test_a_checkpoint_of_every_slot_as_saved_before_loads(tmp_path, monkeypatch):
    """Checkpoints written before prefixes hold the whole capacity, written or not: they load as they did."""
    r = Replay.uniform(SPEC, capacity=16, seed=1)
    r.add(items(0, 5))
    counters = r.storage.state()[1]
    monkeypatch.setattr(r.storage, "state", lambda: (dict(r.storage.arrays), counters))
    r.save(tmp_path)
    q = Replay.uniform(SPEC, capacity=16, seed=1)
    q.load(tmp_path)
    assert q.size == 5
    np.testing.assert_array_equal(q.sample(8).items["i"], r.sample(8).items["i"])


@pytest.mark.parametrize("counters", [{"size": 10**9}, {"next": -5}, {"next": 7}, {"inserted": 3}, {"size": 2.5},
                                      {"inserted": True}])
def test_saved_counters_that_do_not_fit_the_ring_are_refused(tmp_path, counters):
    """A ring's saved counters must agree with its capacity and with each other (next = inserted mod capacity,
    size <= min(inserted, capacity)): otherwise it would sample slots never written."""
    import json

    r = Replay.uniform(SPEC, capacity=8)
    r.add(items(0, 5))
    r.save(tmp_path)
    meta = json.loads((tmp_path / "replay.json").read_text())
    meta["storage"].update(counters)
    (tmp_path / "replay.json").write_text(json.dumps(meta))
    with pytest.raises(ValueError, match="do not fit a ring of 8 slots"):
        Replay.uniform(SPEC, capacity=8).load(tmp_path)
