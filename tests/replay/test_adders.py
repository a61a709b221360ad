import numpy as np
import pytest

from distrl.replay import NStepAdder


def run(adder, steps):
    out = []
    for obs, a, r, nxt, term, trunc, valid in steps:
        got = adder.step(np.array(obs, np.float32)[:, None], np.array(a), np.array(r, float),
                         np.array(nxt, np.float32)[:, None], np.array(term), np.array(trunc), np.array(valid))
        out += [dict(obs=float(o[0]), action=int(a_), reward=float(r_), discount=float(d), next_obs=float(n_[0]))
                for o, a_, r_, d, n_ in zip(got["obs"], got["action"], got["reward"], got["discount"], got["next_obs"])]
    return out


def test_terminated_episode_flushes_without_bootstrap():
    # one env, n = 3, gamma = 0.5; states 0,1,2,3 with rewards 1,2,4; terminates after the 3rd step
    ad = NStepAdder(1, 3, 0.5, (1,), np.float32)
    out = run(ad, [([0], [0], [1], [1], [False], [False], [True]),
                   ([1], [1], [2], [2], [False], [False], [True]),
                   ([2], [0], [4], [3], [True], [False], [True])])
    assert out == [
        dict(obs=0, action=0, reward=1 + 0.5 * 2 + 0.25 * 4, discount=0.0, next_obs=3),
        dict(obs=1, action=1, reward=2 + 0.5 * 4, discount=0.0, next_obs=3),
        dict(obs=2, action=0, reward=4, discount=0.0, next_obs=3),
    ]


def test_full_windows_then_truncation_bootstraps():
    ad = NStepAdder(1, 2, 0.5, (1,), np.float32)
    out = run(ad, [([0], [0], [1], [1], [False], [False], [True]),
                   ([1], [0], [2], [2], [False], [False], [True]),   # window 0-1 complete
                   ([2], [0], [4], [3], [False], [True], [True]),    # truncated: flush 1-2 and 2
                   ([3], [0], [0], [9], [False], [False], [False])])  # reset step: ignored
    assert out == [
        dict(obs=0, action=0, reward=1 + 0.5 * 2, discount=0.25, next_obs=2),
        dict(obs=1, action=0, reward=2 + 0.5 * 4, discount=0.25, next_obs=3),
        dict(obs=2, action=0, reward=4, discount=0.5, next_obs=3),
    ]


def test_envs_are_independent_and_vectorised():
    ad = NStepAdder(2, 2, 1.0, (1,), np.float32)
    out = run(ad, [([0, 10], [0, 1], [1, 10], [1, 11], [False, True], [False, False], [True, True]),
                   ([1, 11], [0, 1], [2, 0], [2, 12], [False, False], [False, False], [True, False]),
                   ([2, 12], [0, 1], [3, 20], [3, 13], [False, False], [False, False], [True, True])])
    env0 = [o for o in out if o["obs"] < 10]
    env1 = [o for o in out if o["obs"] >= 10]
    assert env1 == [dict(obs=10, action=1, reward=10, discount=0.0, next_obs=11)]
    assert env0 == [dict(obs=0, action=0, reward=3, discount=1.0, next_obs=2),
                    dict(obs=1, action=0, reward=5, discount=1.0, next_obs=3)]


def test_bad_n():
    with pytest.raises(ValueError):
        NStepAdder(1, 0, 0.9, (1,), np.float32)


def test_a_tag_rides_with_the_transition_that_starts_at_its_step():
    """Two envs, n = 2: each transition keeps the tag of its first step, through full windows and a flush."""
    ad = NStepAdder(2, 2, 1.0, (1,), np.float32, tags=("versus_fixed",))
    got = []
    for t, (tag, term) in enumerate([([True, False], [False, False]), ([True, False], [False, True]),
                                     ([True, True], [True, False])]):
        out = ad.step(np.array([[t], [10 + t]], np.float32), np.zeros(2, int), np.ones(2), np.zeros((2, 1), np.float32),
                      np.array(term), np.zeros(2, bool), np.array([True, t != 2]), {"versus_fixed": np.array(tag)})
        assert out["versus_fixed"].dtype == bool and len(out["versus_fixed"]) == len(out["obs"])
        got += [(float(o[0]), bool(f)) for o, f in zip(out["obs"], out["versus_fixed"])]
    assert sorted(got) == [(0.0, True), (1.0, True), (2.0, True), (10.0, False), (11.0, False)]
