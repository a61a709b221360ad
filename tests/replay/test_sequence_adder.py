"""The sequence adder and the storage that keeps each step once: what a replayed sequence holds, by hand."""

import numpy as np
import pytest

from distrl.core.types import ArraySpec
from distrl.replay import SequenceAdder, SequenceStorage

STEP = {"obs": ArraySpec((1,), "float32"), "action": ArraySpec((), "int64"), "reward": ArraySpec((), "float32"),
        "discount": ArraySpec((), "float32")}
STATE = {"initial_state": ArraySpec((1,), "float32"), "burn_in_state": ArraySpec((1,), "float32")}


def feed(steps, length=4, overlap=2, chunk=3, burn_in=0):
    """One env; steps: (obs, terminated, valid); state = obs * 10. Chunks of ``chunk`` steps go into a
    SequenceStorage; returns each stored sequence as (real obs, initial state, length, padding, burn-in state)."""
    adder = SequenceAdder(1, length, overlap, state_size=1, burn_in=burn_in)
    storage = SequenceStorage(STEP, STATE, length, capacity=64, step_capacity=256)
    out = []
    for c in range(0, len(steps), chunk):
        part = steps[c:c + chunk]
        items = {"stream": np.array([0]), "chunk": np.array([c // chunk]),
                 "step.obs": np.array([[o] for o, _, _ in part], np.float32),
                 "step.action": np.array([o for o, _, _ in part]), "step.reward": np.ones(len(part), np.float32),
                 "step.discount": np.array([0.0 if term else 0.9 for _, term, _ in part], np.float32)}
        ends = [
            (t, adder.step(np.array([term]), np.array([False]), np.array([valid]), np.array([[o * 10.0]], np.float32)))
            for t, (o, term, valid) in enumerate(part)
        ]
        items["seq_env"] = np.concatenate([e["env"] for _, e in ends])
        items["seq_end"] = np.concatenate([np.full(len(e["env"]), t) for t, e in ends])
        items["seq_length"] = np.concatenate([e["length"] for _, e in ends])
        for k in STATE:
            items[k] = np.concatenate([e[k] for _, e in ends])
        slots = storage.write(items)
        got = storage.read(slots)
        for i in range(len(slots)):
            n = int(got["mask"][i].sum())
            out.append(
                (
                    got["obs"][i, :n, 0].tolist(),
                    float(got["initial_state"][i, 0]),
                    n,
                    got["obs"][i, n:, 0].tolist(),
                    float(got["burn_in_state"][i, 0]),
                )
            )
    return out


def test_overlapping_sequences_and_stored_state_across_chunks():
    out = feed([(o, False, True) for o in range(1, 9)], burn_in=1)
    assert [o[0] for o in out] == [[1, 2, 3, 4], [3, 4, 5, 6], [5, 6, 7, 8]]
    assert [o[1] for o in out] == [10.0, 30.0, 50.0]  # the recurrent state at each sequence's first step
    assert [o[4] for o in out] == [20.0, 40.0, 60.0]  # ... and at its burn-in step


def test_episode_end_pads_and_masks_then_restarts():
    steps = [(1, False, True), (2, False, True), (3, False, True), (4, False, True), (5, True, True),
             (0, False, False),  # reset step: not part of any sequence
             (7, False, True), (8, False, True), (9, True, True)]
    out = feed(steps)
    assert out[0][0] == [1, 2, 3, 4]
    assert out[1][0] == [2, 3, 4, 5] and out[1][2] == 4  # the end closes the window: the last L steps
    assert out[2][0] == [7, 8, 9] and out[2][1] == 70.0  # a short episode: a fresh window from its start,
    assert out[2][2] == 3 and out[2][3] == [0.0]  # padded with zeros and masked


def test_a_sequence_never_splices_steps_from_a_chunk_that_is_not_its_streams_previous_one():
    storage = SequenceStorage(STEP, STATE, 4, capacity=8, step_capacity=64)

    def chunk(counter, first_obs, ends):
        return {
            "stream": np.array([0]),
            "chunk": np.array([counter]),
            "step.obs": np.arange(first_obs, first_obs + 3, dtype=np.float32)[:, None],
            "step.action": np.zeros(3, np.int64),
            "step.reward": np.zeros(3, np.float32),
            "step.discount": np.ones(3, np.float32),
            "seq_env": np.zeros(len(ends), np.int64),
            "seq_end": np.array([e for e, _ in ends]),
            "seq_length": np.array([n for _, n in ends]),
            "initial_state": np.zeros((len(ends), 1), np.float32),
            "burn_in_state": np.zeros((len(ends), 1), np.float32),
        }

    storage.write(chunk(0, 1, []))
    assert len(storage.write(chunk(1, 4, [(0, 4)]))) == 1  # steps 1..4: one from this chunk, three from the last
    assert storage.read(np.array([0]))["obs"][0, :, 0].tolist() == [1, 2, 3, 4]
    assert len(storage.write(chunk(5, 7, [(0, 4)]))) == 0 and storage.dropped == 1  # chunks 2-4 never came


def test_bad_overlap():
    with pytest.raises(ValueError):
        SequenceAdder(1, 4, 4, 1)


def starts_of(steps, length=4, overlap=2):
    """(first obs of each emitted sequence, its episode_start flag) for one env's steps (obs, terminated, valid)."""
    adder = SequenceAdder(1, length, overlap, state_size=1)
    seen, out = [], []
    for o, term, valid in steps:
        seen.append(o)
        e = adder.step(np.array([term]), np.array([False]), np.array([valid]), np.zeros((1, 1), np.float32))
        out += [(seen[-int(n)], bool(s)) for n, s in zip(e["length"], e["episode_start"])]
    return out


def test_only_a_sequence_whose_first_step_starts_the_episode_is_flagged_as_starting_it():
    """By hand, L = 4, overlap 2: an episode of 1..5, a reset step, then a short episode 7..9."""
    steps = [(1, False, True), (2, False, True), (3, False, True), (4, False, True), (5, True, True),
             (0, False, False), (7, False, True), (8, False, True), (9, True, True)]
    assert starts_of(steps) == [(1, True), (2, False), (7, True)]
    long = [(o, False, True) for o in range(1, 9)]
    assert starts_of(long) == [(1, True), (3, False), (5, False)]
