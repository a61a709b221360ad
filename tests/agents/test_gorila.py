import csv
import math

import pytest

import distrl
from tests.agents.learning import scores

SMALL = dict(num_actors=2, num_envs=4, unroll_length=8, min_replay=100, batch_size=32, updates_per_unroll=2)


@pytest.mark.parametrize("runtime", ["inline", "local"])
def test_gorila_smoke(tmp_path, runtime):
    s = distrl.train(
        "gorila", env="CartPole-v1", runtime=runtime, total_steps=3000, run_dir=str(tmp_path / "r"), **SMALL
    )
    assert s["env_steps"] >= 3000
    header = (tmp_path / "r" / "metrics.csv").read_text().splitlines()[0].split(",")
    for col in ("actor_staleness", "actor_shards_applied", "actor_shards_dropped", "dropped_gradients", "updates_total",
                "loss"):
        assert col in header
    with open(tmp_path / "r" / "metrics.csv") as f:  # the bundles' DQN loss (Huber), once their learners have started
        losses = [float(r["loss"]) for r in csv.DictReader(f) if r["loss"] not in ("", "nan")]
    assert losses and all(math.isfinite(v) and v >= 0 for v in losses), losses


def test_gorila_drops_gradients_when_staleness_limit_is_zero(tmp_path):
    s = distrl.train("gorila", env="CartPole-v1", runtime="local", total_steps=20_000, max_staleness=0,
                     run_dir=str(tmp_path / "r"), **SMALL)
    with open(tmp_path / "r" / "metrics.csv") as f:
        rows = list(csv.DictReader(f))
    assert float(rows[-1]["dropped_gradients"]) > 0  # two bundles racing: some gradients arrive stale
    assert s["learner_updates"] > 0


def test_gorila_learns_cartpole(tmp_path):
    """After 150k steps on ``inline`` greedy play is past 60 (an untrained Q network: ~10).

    Spread (``benchmarks/learning_spread.py --cases gorila --seeds 0..4 --variants base sse``, 10 runs, batches of
    128): 120-500 (500, 478, 125, 134, 447 and 172, 474, 122, 120, 451; with the former 64, seeds 0-9: 122-500,
    median 264); with every bundle spanning the ladder (2026-11-29, ``--variants base``) 500, 332, 230, 133, 498;
    every run is at least twice the bar. The bars this
    test had (eval 400, training mean 200) were set from seed 0 on one machine and failed on another.
    On ``local`` the two bundles race for the shards, so a run's outcome varies with timing; the local
    runtime is covered by the smoke and staleness tests, and its full-budget results are in the README."""
    got = scores("gorila", (0,), tmp_path, score="eval", env="CartPole-v1", runtime="inline", total_steps=150_000)
    assert got[0] >= 60, got


@pytest.mark.parametrize("runtime", ["inline", "local"])
def test_gorila_global_replay_smoke(tmp_path, runtime):
    """One replay in shared memory that every bundle writes (its own partition) and every learner samples."""
    s = distrl.train("gorila", env="CartPole-v1", runtime=runtime, total_steps=3000, run_dir=str(tmp_path / "r"),
                     replay="global", prioritized=False, **SMALL)
    assert s["env_steps"] >= 3000 and s["learner_updates"] > 0


def test_gorila_global_replay_is_checkpointed_and_resumed(tmp_path):
    import json

    kw = dict(
        env="CartPole-v1",
        runtime="local",
        run_dir=str(tmp_path / "r"),
        replay="global",
        prioritized=False,
        replay_capacity=5000,
        **SMALL,
    )
    distrl.train("gorila", total_steps=3000, **kw)
    ckpt = sorted((tmp_path / "r" / "checkpoints").glob("step-*"))[-1]
    saved = sum(size for _, size in json.loads((ckpt / "replay.json").read_text())["counts"])
    assert saved >= 2500
    distrl.train("gorila", total_steps=5000, resume=True, **kw)
    final = sorted((tmp_path / "r" / "checkpoints").glob("step-*"))[-1]
    assert sum(size for _, size in json.loads((final / "replay.json").read_text())["counts"]) >= saved + 1500


def test_every_bundle_spans_the_exploration_ladder():
    """Each bundle learns from its own replay, so each acts with rates from the ladder's top to its bottom (a block
    of neighbouring rungs left the last bundle's replay almost all greedy): bundle i has rungs i, i + N, ..."""
    from distrl.agents.common.shared_optim import shared_optimizer
    from distrl.agents.gorila.actor import GorilaBundle
    from distrl.agents.gorila.config import GorilaConfig
    from distrl.agents.gorila.networks import make_model
    from distrl.envs.make import env_spec
    from distrl.ops import epsilon_ladder
    from distrl.runtime.services.param_server import SharedShards

    cfg, env = GorilaConfig(num_actors=2, num_envs=4), env_spec("CartPole-v1")
    params = SharedShards(make_model(env, cfg), shared_optimizer("adam", 1e-3, 1e-5, 0.99), 2, 20)
    ladder = epsilon_ladder(8, cfg.epsilon, cfg.epsilon_alpha)
    for i in range(2):
        bundle = GorilaBundle("CartPole-v1", env, cfg, i, i, params, make_model(env, cfg))
        assert bundle.actor.exploration.epsilons.tolist() == ladder[i::2].tolist()
        bundle.actor.env.close()
