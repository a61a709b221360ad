import numpy as np
import pytest

from distrl.replay import SequenceAdder


def feed(adder, steps):
    """steps: (obs, terminated, valid) per step for one env; state = obs * 10, action = obs, reward = 1."""
    out = []
    for obs, term, valid in steps:
        got = adder.step(np.array([[obs]], np.float32), np.array([obs]), np.array([1.0]), np.array([term]),
                         np.array([False]), np.array([valid]), np.array([[obs * 10.0]], np.float32))
        for i in range(len(got["mask"])):
            n = int(got["mask"][i].sum())
            out.append((got["obs"][i, :n, 0].tolist(), float(got["initial_state"][i, 0]), n,
                        got["obs"][i, n:, 0].tolist()))
    return out


def test_overlapping_sequences_and_stored_state():
    ad = SequenceAdder(1, length=4, overlap=2, obs_shape=(1,), obs_dtype=np.float32, state_size=1, gamma=0.9)
    out = feed(ad, [(o, False, True) for o in range(1, 9)])
    assert [o[0] for o in out] == [[1, 2, 3, 4], [3, 4, 5, 6], [5, 6, 7, 8]]
    assert [o[1] for o in out] == [10.0, 30.0, 50.0]  # the recurrent state at each sequence's first step


def test_episode_end_pads_and_masks_then_restarts():
    ad = SequenceAdder(1, length=4, overlap=2, obs_shape=(1,), obs_dtype=np.float32, state_size=1, gamma=0.9)
    steps = [(1, False, True), (2, False, True), (3, False, True), (4, False, True), (5, True, True),
             (0, False, False),  # reset step: not recorded
             (7, False, True), (8, False, True), (9, True, True)]
    out = feed(ad, steps)
    assert out[0][0] == [1, 2, 3, 4]
    assert out[1][0] == [2, 3, 4, 5] and out[1][2] == 4  # the end closes the window: the last L steps
    assert out[2][0] == [7, 8, 9] and out[2][1] == 70.0  # a short episode: a fresh window from its start,
    assert out[2][2] == 3 and out[2][3] == [0.0]  # padded with zeros and masked


def test_discount_is_zero_at_termination():
    ad = SequenceAdder(1, length=3, overlap=0, obs_shape=(1,), obs_dtype=np.float32, state_size=1, gamma=0.5)
    got = ad.step(np.zeros((1, 1), np.float32), np.array([0]), np.array([1.0]), np.array([True]), np.array([False]),
                  np.array([True]), np.zeros((1, 1), np.float32))
    assert got["discount"][0].tolist() == [0.0, 0.0, 0.0] and got["mask"][0].tolist() == [True, False, False]


def test_bad_overlap():
    with pytest.raises(ValueError):
        SequenceAdder(1, 4, 4, (1,), np.float32, 1, 0.9)
