"""The ceiling: actors alone in their own processes, the learner alone, and how they combine."""

import pytest

from distrl.bench import ceiling
from distrl.bench.ceiling import actor_count, learner_alone, learner_rate, measure


def row(steps, updates, learn_s):
    return {"env_steps": str(steps), "learner_updates": str(updates), "time_learn_s": str(learn_s)}


def test_learner_rate_counts_only_rows_after_the_first_update():
    rows = [row(1000, 0, 0.0), row(2000, 0, 0.0),  # a replay's warm-up: env steps, no learning
            row(3000, 5, 0.4),                       # the first update happens inside this row: left out
            row(4000, 10, 0.5), row(6000, 20, 1.0)]  # 3,000 env steps over 1.5 s of learner time
    assert learner_rate(rows) == pytest.approx(3000 / 1.5)
    assert learner_rate(rows[:3]) is None  # no row wholly after the first update
    assert learner_rate([]) is None



def test_learning_components_do_for_the_learner_counts_as_learner_time():
    """QT-Opt's updaters label targets (time_worker_learn_s): 3,000 env steps over 1.5 s of trainer time and
    4.5 s of labelling is 500 env steps per second of learning, not 2,000."""
    rows = [dict(row(1000, 0, 0.0), time_worker_learn_s="0.5"), dict(row(3000, 5, 0.4), time_worker_learn_s="1.0"),
            dict(row(4000, 10, 0.5), time_worker_learn_s="1.5"), dict(row(6000, 20, 1.0), time_worker_learn_s="3.0")]
    assert learner_rate(rows) == pytest.approx(3000 / 6.0)


def test_a_window_too_short_for_two_batches_is_doubled_up_to_the_most(monkeypatch):
    """A learner whose batches take 2.2 s gives a rate only in a window of 4.4 s or more."""
    windows = []

    def rate_within(system, env, settings, seconds):
        windows.append(seconds)
        return 1234.0 if seconds >= 4.4 else None

    monkeypatch.setattr(ceiling, "_learner_rate_within", rate_within)
    assert learner_alone("a2c", "CartPole-v1", {}, 0.5) == 1234.0 and windows == [0.5, 1.0, 2.0, 4.0, 8.0]
    windows.clear()
    assert learner_alone("a2c", "CartPole-v1", {}, 0.5, most_s=3.0) is None and windows == [0.5, 1.0, 2.0]


def test_a_system_without_a_learner_has_the_actors_alone_and_inline_one_process():
    c = measure("a3c", "CartPole-v1", {"num_envs": 2}, 2, 0.3, has_learner=False, runtime="inline")
    assert c["processes"] == 1 and c["actors"] == 2  # inline: the two workers take turns in one process
    assert c["learner_alone_sps"] is None and c["ceiling_sps"] == c["actors_alone_sps"] > 0
    assert not c["learner_missing"]


def test_actor_count():
    assert actor_count("impala", {}) == 2 and actor_count("impala", {"num_actors": 3}) == 3
    assert actor_count("a2c", {}) is None  # one actor by design
