"""The ceiling: actors alone in their own processes, the learner alone, and how a cell is compared with it."""

import pytest

from distrl.bench.ceiling import actor_count, for_runtime, measure


def test_measured_ceiling_is_the_shared_cpu_combination():
    c = measure("impala", "CartPole-v1", {"num_envs": 4}, 1, 0.5, has_learner=True)
    a, b = c["actors_alone_sps"], c["learner_alone_sps"]
    assert a > 0 and b > 0
    assert c["ceiling_sps"] == pytest.approx(1.0 / (1.0 / a + 1.0 / b))
    assert c["ceiling_sps"] < min(a, b)


def test_a_system_without_a_learner_has_the_actors_alone():
    c = measure("a3c", "CartPole-v1", {"num_envs": 2}, 1, 0.3, has_learner=False)
    assert c["learner_alone_sps"] is None and c["ceiling_sps"] == c["actors_alone_sps"] > 0


def test_inline_takes_one_process_of_actors():
    c = {"actors": 2, "actors_alone_sps": 200.0, "learner_alone_sps": 100.0, "ceiling_sps": 1 / (1 / 200 + 1 / 100)}
    assert for_runtime(c, "local") == c
    one = for_runtime(c, "inline")
    assert one["actors_alone_sps"] == 100.0  # two actors in turn on one process: one process's rate
    assert one["ceiling_sps"] == pytest.approx(50.0)  # 1 / (1/100 + 1/100)
    no_learner = for_runtime(dict(c, learner_alone_sps=None), "inline")
    assert no_learner["ceiling_sps"] == 100.0


def test_actor_count():
    assert actor_count("impala", {}) == 2 and actor_count("impala", {"num_actors": 3}) == 3
    assert actor_count("a2c", {}) is None  # one actor by design
