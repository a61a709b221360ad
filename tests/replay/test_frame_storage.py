"""Frame-sharing storage: exact reads, one copy per distinct frame, safe eviction, exact checkpoints."""

import numpy as np
import pytest

from distrl.core.types import ArraySpec
from distrl.replay import Replay

H = W = 8  # small frames; the mechanism does not depend on their size
SPEC = {"obs": ArraySpec((4, H, W), "uint8"), "next_obs": ArraySpec((4, H, W), "uint8"),
        "action": ArraySpec((), "int64"), "uid": ArraySpec((), "int64")}


def stream_chunk(rng, envs=4, steps=16, n=3, start_uid=0):
    """Transitions of ``envs`` frame-stacked streams (as FrameStackObservation builds them), n-step apart."""
    items = {k: [] for k in SPEC}
    uid = start_uid
    for _ in range(envs):
        frames = rng.integers(0, 256, (steps + n + 3, H, W), dtype=np.uint8)
        for t in range(steps):
            items["obs"].append(frames[t:t + 4])
            items["next_obs"].append(frames[t + n:t + n + 4])
            items["action"].append(t)
            items["uid"].append(uid)
            uid += 1
    return {k: np.stack(v) for k, v in items.items()}


def test_reads_are_exact_and_each_distinct_frame_is_stored_once():
    rng = np.random.default_rng(0)
    r = Replay.uniform(SPEC, 1000, frame_stacks=("obs", "next_obs"))
    chunk = stream_chunk(rng)
    slots = r.add(chunk)
    back = r.storage.read(slots)
    for k in SPEC:
        np.testing.assert_array_equal(back[k], chunk[k])
    assert r.storage.frames_written == 4 * (16 + 3 + 3)  # per stream: steps + n + 3 distinct frames
    whole = sum(s.nbytes for s in SPEC.values())
    assert r.bytes_per_item < whole / 2  # 2 frames of ring per item here, against 8 frames stored whole


def test_frames_that_differ_in_one_pixel_are_kept_apart():
    a = np.zeros((4, H, W), np.uint8)
    b = a.copy()
    b[3, 5, 6] = 1
    r = Replay.uniform(SPEC, 10, frame_stacks=("obs", "next_obs"))
    items = {
        "obs": np.stack([a, b]),
        "next_obs": np.stack([b, a]),
        "action": np.zeros(2, np.int64),
        "uid": np.arange(2),
    }
    back = r.storage.read(r.add(items))
    np.testing.assert_array_equal(back["obs"], items["obs"])
    np.testing.assert_array_equal(back["next_obs"], items["next_obs"])
    assert r.storage.frames_written == 2  # the all-zero frame and the one with a pixel set


def test_items_whose_frames_were_overwritten_are_evicted_before_any_read():
    rng = np.random.default_rng(1)
    r = Replay.prioritized(SPEC, 256, frame_stacks=("obs", "next_obs"))  # frame ring: 320 frames
    written = {}
    uid = 0
    for _ in range(40):
        chunk = stream_chunk(rng, envs=2, steps=4, n=3, start_uid=uid)  # 10 frames per 4 items: ring wraps first
        uid += len(chunk["uid"])
        for i, u in enumerate(chunk["uid"]):
            written[int(u)] = (chunk["obs"][i], chunk["next_obs"][i])
        r.add(chunk, np.ones(len(chunk["uid"])))
        b = r.sample(64)
        for i, u in enumerate(b.items["uid"]):
            np.testing.assert_array_equal(b.items["obs"][i], written[int(u)][0])
            np.testing.assert_array_equal(b.items["next_obs"][i], written[int(u)][1])
    assert r.evicted > 0 and r.size < 256  # frames, not item slots, bounded what stayed


def test_checkpoint_round_trip_is_exact(tmp_path):
    rng = np.random.default_rng(2)
    r = Replay.prioritized(SPEC, 200, frame_stacks=("obs", "next_obs"), seed=3)
    for _ in range(5):
        c = stream_chunk(rng, envs=2, steps=8)
        r.add(c, rng.random(len(c["uid"])))
    r.save(tmp_path)
    q = Replay.prioritized(SPEC, 200, frame_stacks=("obs", "next_obs"), seed=99)
    q.load(tmp_path)
    a, b = r.sample(32), q.sample(32)
    np.testing.assert_array_equal(a.slots, b.slots)
    for k in SPEC:
        np.testing.assert_array_equal(a.items[k], b.items[k])


def test_rejects_fields_that_are_not_frame_stacks():
    with pytest.raises(ValueError, match="frame-stack"):
        Replay.uniform({"obs": ArraySpec((4,), "float32"), "next_obs": ArraySpec((4,), "float32")}, 10,
                       frame_stacks=("obs", "next_obs"))


def test_the_next_chunk_of_the_same_streams_reuses_the_frames_already_stored():
    rng = np.random.default_rng(4)
    n, steps, envs = 3, 16, 4
    frames = rng.integers(0, 256, (envs, 2 * steps + n + 3, H, W), dtype=np.uint8)

    def chunk(t0):
        obs = np.stack([frames[e, t:t + 4] for e in range(envs) for t in range(t0, t0 + steps)])
        nxt = np.stack([frames[e, t + n:t + n + 4] for e in range(envs) for t in range(t0, t0 + steps)])
        return {"obs": obs, "next_obs": nxt, "action": np.zeros(len(obs), np.int64), "uid": np.arange(len(obs))}

    r = Replay.uniform(SPEC, 1000, frame_stacks=("obs", "next_obs"))
    first, second = chunk(0), chunk(steps)
    r.add(first)
    slots = r.add(second)
    assert r.storage.frames_written == envs * (2 * steps + n + 3)  # every distinct frame once, across chunks
    back = r.storage.read(slots)
    np.testing.assert_array_equal(back["obs"], second["obs"])
    np.testing.assert_array_equal(back["next_obs"], second["next_obs"])
