"""SequenceStorage against a reference built from the actors' full step logs, on generated runs: several
actors whose chunks interleave, random episode ends, a step ring small enough to wrap; plus pixels kept
once, byte accounting and checkpoints."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from distrl.core.types import ArraySpec
from distrl.replay import PrioritizedSampler, Replay, SequenceAdder, SequenceStorage

STEP = {"obs": ArraySpec((1,), "float32"), "action": ArraySpec((), "int64"), "reward": ArraySpec((), "float32"),
        "discount": ArraySpec((), "float32")}
STATE = {"initial_state": ArraySpec((1,), "float32"), "burn_in_state": ArraySpec((1,), "float32")}


class FakeActor:
    """E env streams with unique step ids as observations (and as the recurrent state, so a sequence's
    initial state names its first step); keeps every stream's full log as the reference."""

    def __init__(self, index, envs, steps, length, overlap, rng, end_prob):
        self.index, self.E, self.T, self.rng, self.end_prob = index, envs, steps, rng, end_prob
        self.adder = SequenceAdder(envs, length, overlap, state_size=1)
        self.logs = [[] for _ in range(envs)]
        self.prev_done = np.zeros(envs, bool)
        self.chunks = 0

    def chunk(self, next_uid, expected, new=None):
        E, T = self.E, self.T
        uids = next_uid + np.arange(T * E, dtype=np.float32).reshape(T, E)
        ends = {"seq_env": [], "seq_end": [], "seq_length": [], "initial_state": [], "burn_in_state": []}
        term = self.rng.random((T, E)) < self.end_prob
        for t in range(T):
            valid = ~self.prev_done
            for e in range(E):
                if valid[e]:
                    self.logs[e].append(uids[t, e])
            out = self.adder.step(term[t] & valid, np.zeros(E, bool), valid, uids[t][:, None])
            for e, n in zip(out["env"], out["length"]):
                seq = self.logs[e][-n:]
                expected[(seq[0], len(seq))] = seq
                if new is not None:
                    new.append(seq[0])
            for k, v in (
                ("seq_env", out["env"]),
                ("seq_end", np.full(len(out["env"]), t)),
                ("seq_length", out["length"]),
                ("initial_state", out["initial_state"]),
                ("burn_in_state", out["burn_in_state"]),
            ):
                ends[k].append(v)
            self.prev_done = term[t] & valid
            for e in np.flatnonzero(self.prev_done):
                self.logs[e] = []
        items = {"stream": self.index * E + np.arange(E), "chunk": np.full(E, self.chunks),
                 "step.obs": uids.reshape(-1, 1), "step.action": np.zeros(T * E, np.int64),
                 "step.reward": np.zeros(T * E, np.float32), "step.discount": np.ones(T * E, np.float32)}
        items.update({k: np.concatenate(v) for k, v in ends.items()})
        self.chunks += 1
        return items, next_uid + T * E


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31), actors=st.integers(1, 3), envs=st.integers(1, 3), steps=st.integers(1, 5),
       length=st.integers(2, 6), overlap_frac=st.floats(0, 0.99), end_prob=st.sampled_from([0.0, 0.1, 0.4]),
       step_capacity=st.integers(16, 80))
def test_every_readable_sequence_is_exactly_its_streams_steps(seed, actors, envs, steps, length, overlap_frac, end_prob,
                                                             step_capacity):
    rng = np.random.default_rng(seed)
    overlap = int(overlap_frac * length)
    # 2 to 30 chunks, so the ring wraps; and at least two sequences' steps for every stream, so a sequence can
    # complete before its first steps are overwritten (with less, every one is dropped: hypothesis found
    # 3 actors x 3 envs, 1 step per chunk, length 6 in an 18-step ring)
    step_capacity = max(min(step_capacity, 30 * envs * steps), 2 * actors * envs * max(steps, length))
    replay = Replay(None, 40, PrioritizedSampler(40, 0.9), soft_capacity=30,
                    storage=SequenceStorage(STEP, STATE, length, 40, step_capacity))
    team = [FakeActor(i, envs, steps, length, overlap, rng, end_prob) for i in range(actors)]
    expected, uid, inserted, lagged = {}, 1.0, 0, 0
    for _ in range(60):
        new = []
        items, uid = team[rng.integers(actors)].chunk(uid, expected, new)  # actors' chunks interleave at random
        inserted += len(replay.add(items))
        steps = replay.storage.steps
        lagged += sum(first - 1 < steps.inserted - steps.size for first in new)  # step id = uid - 1
        replay.trim()
        if replay.size == 0:
            continue
        got = replay.storage.read(replay.storage.oldest_slots(replay.size))
        for i in range(replay.size):
            n = int(got["mask"][i].sum())
            seq = got["obs"][i, :n, 0].tolist()
            assert seq == expected[(float(got["initial_state"][i, 0]), n)]
            assert (got["obs"][i, n:] == 0).all()
    # every actor's chunks came in order: only sequences whose first steps had already left the ring (an actor
    # not drawn for a long while) are dropped, and the rest of the replay stays
    assert inserted > 0 and replay.storage.dropped == lagged
    assert replay.storage.steps.inserted > step_capacity  # the step ring wrapped: stale sequences were evicted


def test_each_step_is_stored_once_and_the_bytes_say_so():
    L, overlap, E, T = 8, 4, 2, 8
    storage = SequenceStorage(STEP, STATE, L, capacity=100, step_capacity=400)
    actor = FakeActor(0, E, T, L, overlap, np.random.default_rng(0), 0.0)
    expected, uid = {}, 1.0
    for _ in range(10):
        items, uid = actor.chunk(uid, expected)
        storage.write(items)
    assert storage.steps.inserted == 10 * E * T  # every step once ...
    # ... though they overlap by half
    assert storage.size == len(expected) and storage.size * L > 1.8 * storage.steps.inserted
    per_sequence = 4 * L + 8 + 4 + 2 * 4  # int32 positions, first step, length, two one-float states
    assert storage.bytes_per_step == (400 * storage.step_bytes + 100 * per_sequence) / 400
    assert storage.step_bytes == 4 + 8 + 4 + 4


def test_pixel_stacks_keep_each_frame_once_across_interleaved_actors():
    H = W = 8
    step = {"obs": ArraySpec((4, H, W), "uint8"), "action": ArraySpec((), "int64"), "reward": ArraySpec((), "float32"),
            "discount": ArraySpec((), "float32")}
    L, E, T = 6, 2, 5
    storage = SequenceStorage(step, STATE, L, capacity=50, step_capacity=200, frame_stacks=("obs",))
    rng = np.random.default_rng(0)
    frames = rng.integers(0, 256, (2, E, 200, H, W), dtype=np.uint8)  # two actors' streams, one new frame per step
    adders = [SequenceAdder(E, L, 3, 1) for _ in range(2)]
    seen = {}
    for c in range(8):
        for a in range(2):  # the actors' chunks alternate: the stacks at a chunk's start repeat frames two batches back
            t0 = c * T
            stacks = np.stack([np.stack([frames[a, e, t0 + t:t0 + t + 4] for e in range(E)]) for t in range(T)])
            ends = [
                adders[a].step(
                    np.zeros(E, bool),
                    np.zeros(E, bool),
                    np.ones(E, bool),
                    (1000 * a + 100 * np.arange(E) + t0 + t)[:, None].astype(np.float32),
                )
                for t in range(T)
            ]
            items = {"stream": a * E + np.arange(E), "chunk": np.full(E, c), "step.obs": stacks.reshape(T * E, 4, H, W),
                     "step.action": np.zeros(T * E, np.int64), "step.reward": np.zeros(T * E, np.float32),
                     "step.discount": np.ones(T * E, np.float32),
                     "seq_env": np.concatenate([e["env"] for e in ends]),
                     "seq_end": np.concatenate([np.full(len(e["env"]), t) for t, e in enumerate(ends)]),
                     "seq_length": np.concatenate([e["length"] for e in ends]),
                     "initial_state": np.concatenate([e["initial_state"] for e in ends]),
                     "burn_in_state": np.concatenate([e["burn_in_state"] for e in ends])}
            for k, state in zip(items["seq_env"], items["initial_state"][:, 0]):
                seen[float(state)] = (a, int(k))
            storage.write(items)
    assert storage.steps.frames_written == 2 * E * (8 * T + 3)  # one frame per step (+3 for each stream's first stack)
    got = storage.read(storage.oldest_slots(storage.size))
    for i in range(storage.size):
        a, e = seen[float(got["initial_state"][i, 0])]
        t0 = int(got["initial_state"][i, 0]) - 1000 * a - 100 * e
        for j in range(L):
            np.testing.assert_array_equal(got["obs"][i, j], frames[a, e, t0 + j:t0 + j + 4])
    # at Atari's size (84x84 frames, the paper's m = 80 and 512 LSTM units) the whole replay costs at most 1.2x
    # one frame and the step's scalars per env step: stacks keep each frame once, sequences each step once
    atari = {**step, "obs": ArraySpec((4, 84, 84), "uint8")}
    state = {k: ArraySpec((1024,), "float32") for k in STATE}
    big = SequenceStorage(
        atari, state, 80, capacity=1251, step_capacity=1000 * 40, frame_stacks=("obs",), prefault=False
    )
    assert big.step_bytes == 84 * 84 + 16 and big.bytes_per_step < 1.2 * big.step_bytes


def test_checkpoint_round_trip_continues_exactly(tmp_path):
    def run(replay, actor, uid, expected, chunks):
        for _ in range(chunks):
            items, uid = actor.chunk(uid, expected)
            replay.add(items)
        return uid

    def make():
        return Replay(None, 50, PrioritizedSampler(50, 0.9), storage=SequenceStorage(STEP, STATE, 5, 50, 120))

    a = make()
    actor = FakeActor(0, 2, 4, 5, 2, np.random.default_rng(1), 0.1)
    expected = {}
    uid = run(a, actor, 1.0, expected, 12)
    a.save(tmp_path)
    b = make()
    b.load(tmp_path)
    uid = run(b, actor, uid, expected, 5)  # the next chunk's sequences reach into the saved history
    got = b.storage.read(b.storage.oldest_slots(b.size))
    for i in range(b.size):
        n = int(got["mask"][i].sum())
        assert got["obs"][i, :n, 0].tolist() == expected[(float(got["initial_state"][i, 0]), n)]
    assert b.storage.dropped == 0


def test_a_replay_saved_before_a_per_sequence_field_existed_loads_with_it_zeroed(tmp_path):
    """R2D2's ``episode_start`` came after replays were first checkpointed: such a replay loads, its sequences
    unflagged (what the version that saved them did), the rest exactly as saved."""
    old = Replay(None, 50, PrioritizedSampler(50, 0.9), storage=SequenceStorage(STEP, STATE, 5, 50, 120))
    actor = FakeActor(0, 2, 4, 5, 2, np.random.default_rng(1), 0.1)
    for _ in range(6):
        items, _ = actor.chunk(1.0 + 100 * actor.chunks, {})
        old.add(items)
    old.save(tmp_path)
    flagged = dict(STATE, episode_start=ArraySpec((), "bool"))
    new = Replay(None, 50, PrioritizedSampler(50, 0.9), storage=SequenceStorage(STEP, flagged, 5, 50, 120))
    new.load(tmp_path)
    slots = old.storage.oldest_slots(old.size)
    saved, loaded = old.storage.read(slots), new.storage.read(slots)
    assert new.size == old.size > 0 and not loaded["episode_start"].any()
    for k in saved:
        np.testing.assert_array_equal(loaded[k], saved[k])


def test_a_stream_that_lags_a_whole_ring_behind_loses_its_sequence_not_the_replay():
    storage = SequenceStorage(STEP, STATE, 4, capacity=16, step_capacity=8)
    replay = Replay(None, 16, PrioritizedSampler(16, 0.9), storage=storage)
    slow, fast = (
        FakeActor(0, 1, 2, 4, 2, np.random.default_rng(0), 0.0),
        FakeActor(1, 1, 2, 4, 2, np.random.default_rng(1), 0.0),
    )
    expected, uid = {}, 1.0
    items, uid = slow.chunk(uid, expected)
    replay.add(items)  # the slow stream's first two steps
    for _ in range(4):
        items, uid = fast.chunk(uid, expected)  # 8 steps of the other stream: the slow one's are overwritten
        replay.add(items)
    before = replay.size
    assert before > 0
    items, uid = slow.chunk(uid, expected)  # its first sequence needs its first two steps again
    replay.add(items)
    # the write itself overwrites two more steps: at most the oldest sequence goes, never the whole replay
    assert storage.dropped == 1 and replay.size >= before - 1 > 0
    got = storage.read(storage.oldest_slots(replay.size))
    for i in range(replay.size):
        n = int(got["mask"][i].sum())
        assert got["obs"][i, :n, 0].tolist() == expected[(float(got["initial_state"][i, 0]), n)]


def test_actor_priorities_stay_with_their_sequences_when_some_of_a_chunk_are_dropped():
    """A chunk whose first sequences reach into a chunk that never came is written without them; the sequences
    kept get the priorities their actor gave them, not their dropped neighbours'."""
    storage = SequenceStorage(STEP, STATE, 4, capacity=16, step_capacity=64)
    replay = Replay(None, 16, PrioritizedSampler(16, 1.0, eps=0.0), storage=storage)
    actor, expected = FakeActor(0, 2, 4, 4, 2, np.random.default_rng(0), 0.0), {}
    items, uid = actor.chunk(1.0, expected)
    replay.add(items)
    actor.chunks += 1  # the next chunk is lost
    items, uid = actor.chunk(uid, expected)
    assert len(items["seq_env"]) == 4  # two ending at step 1 (reaching into the lost chunk), two at step 3
    slots = replay.add(items, np.array([5.0, 6.0, 7.0, 8.0]))
    assert storage.dropped == 2 and len(slots) == 2
    np.testing.assert_allclose(replay.sampler.tree.get(slots), [7.0, 8.0])
    with pytest.raises(ValueError, match="2 priorities for 1 new items"):
        replay.sampler.insert(np.array([3]), np.array([1.0, 2.0]))
