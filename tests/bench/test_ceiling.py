"""The ceiling: actors alone in their own processes, the learner alone, and how they combine."""

from types import SimpleNamespace

from distrl.bench import ceiling
from distrl.bench.ceiling import actor_count, learner_alone, measure


def test_the_learner_alone_is_timed_over_whole_batches_after_the_first_even_in_a_shorter_window():
    """A window far shorter than one batch still times the batch after the first: steps over learner time."""
    rate = learner_alone("a2c", "CartPole-v1", {"num_envs": 4, "unroll_length": 64}, 1e-4)
    assert rate is not None and rate > 0


def test_a_warm_up_longer_than_the_most_gives_no_rate():
    assert learner_alone("apex-dqn", "CartPole-v1", {"num_actors": 1, "min_replay": 10**7}, 0.1, most_s=0.5) is None


def test_learning_components_do_for_the_learner_count_as_its_time():
    """QT-Opt's updaters label the targets the trainer learns from: their time is learning time too."""
    trainer = SimpleNamespace(ledger=SimpleNamespace(totals=SimpleNamespace(learn_s=1.5, worker_learn_s=4.5)))
    assert ceiling._learn_s(trainer) == 6.0


def test_a_system_without_a_learner_has_the_actors_alone_and_inline_one_process():
    c = measure("a3c", "CartPole-v1", {"num_envs": 2}, 2, 0.3, has_learner=False, runtime="inline")
    assert c["processes"] == 1 and c["actors"] == 2  # inline: the two workers take turns in one process
    assert c["learner_alone_sps"] is None and c["ceiling_sps"] == c["actors_alone_sps"] > 0
    assert not c["learner_missing"]


def test_actor_count():
    assert actor_count("impala", {}) == 2 and actor_count("impala", {"num_actors": 3}) == 3
    assert actor_count("a2c", {}) is None  # one actor by design
