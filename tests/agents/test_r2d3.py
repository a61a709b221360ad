"""R2D3 and demonstrations for every replay system: the demo replay rebuilds the recorded episodes, is
mixed into the learner's batches on every runtime, is saved in checkpoints and not reloaded on resume;
Ape-X DQN and Ape-X DDPG take the same settings."""

import csv
import json

import numpy as np
import pytest

import distrl
from distrl.datasets import Episodes, record_episodes, write_episodes
from distrl.datasets.demonstrators import mountain_car
from distrl.datasets.record import batch_policy
from distrl.errors import ConfigError

SMALL = dict(num_actors=2, num_envs=4, unroll_length=10, min_replay=20, batch_size=8, replay_size=500,
             sequence_length=10, overlap=5, burn_in=2, n_step=3)
RUN = dict(SMALL, log_interval_s=0.05)


@pytest.fixture(scope="module")
def demos(tmp_path_factory):
    out = tmp_path_factory.mktemp("demos") / "mc"
    write_episodes(out, record_episodes("MountainCar-v0", batch_policy(mountain_car), episodes=3), "scripted")
    return str(out)


def metrics(run):
    return list(csv.DictReader(open(run / "metrics.csv")))


def test_demo_sequences_rebuild_the_recorded_episodes(demos):
    from distrl.agents.r2d2.actor import (
        chunk_spec,
        episodes_to_chunks,
        sequences_to_insert,
    )
    from distrl.agents.r2d2.builder import demo_replay_for
    from distrl.agents.r2d3.config import R2D3Config
    from distrl.config import build as build_config
    from distrl.datasets import load_episodes
    from distrl.envs import env_spec

    cfg = build_config(R2D3Config, dict(SMALL, demos=demos))
    eps = load_episodes(demos)
    replay = demo_replay_for(chunk_spec(env_spec("MountainCar-v0"), cfg, cfg.lstm), cfg, False, 3, eps)()
    for chunk in episodes_to_chunks(eps, cfg=cfg, state_size=cfg.lstm):
        replay.add(*sequences_to_insert(chunk))
    seqs = replay.storage.read(replay.storage.oldest_slots(replay.size))
    covered = set()
    for k in range(replay.size):
        n = int(seqs["mask"][k].sum())
        obs = seqs["obs"][k, :n]
        for i, ep in enumerate(eps.observations):  # each sequence is a run of consecutive steps of one episode
            hits = [t for t in range(len(ep) - n) if np.array_equal(ep[t:t + n], obs)]
            if hits:
                t = hits[0]
                np.testing.assert_array_equal(seqs["action"][k, :n], eps.actions[i][t:t + n])
                covered.update((i, s) for s in range(t, t + n))
                break
        else:
            raise AssertionError(f"sequence {k} is no run of a recorded episode")
        assert not seqs["initial_state"][k].any()  # recordings carry no recurrent state
    assert len(covered) == eps.steps  # every recorded step is in some sequence
    assert replay.size <= replay.soft_capacity


def test_r2d3_needs_demos_and_they_must_fit_the_env(demos):
    with pytest.raises(ConfigError, match="--set demos=DIR"):
        distrl.train("r2d3", env="MountainCar-v0", runtime="inline", total_steps=100)
    with pytest.raises(ConfigError, match="recorded on 'MountainCar-v0'"):
        distrl.train("r2d3", env="CartPole-v1", runtime="inline", total_steps=100, demos=demos)


def test_several_learners_refuse_a_batch_mixed_from_two_replays(tmp_path, demos):
    with pytest.raises(ConfigError, match="mixes samples of replay and demos into its batches"):
        distrl.train("r2d3", env="MountainCar-v0", runtime="local", num_learners=2, total_steps=100, demos=demos,
                     run_dir=str(tmp_path / "r"))
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("runtime", ["inline", "local", "ray"])
def test_r2d3_mixes_demos_into_its_batches_on_every_runtime(tmp_path, demos, runtime, request):
    if runtime == "ray":
        request.getfixturevalue("local_ray")  # the suite's shared instance (skips without the ray extra)
    run = tmp_path / "r"
    s = distrl.train("r2d3", env="MountainCar-v0", runtime=runtime, total_steps=3000, run_dir=str(run), demos=demos,
                     demo_ratio=0.25, **RUN)
    assert s["learner_updates"] > 0
    fractions = [float(r["demo_fraction"]) for r in metrics(run) if r.get("demo_fraction")]
    assert fractions and 0.05 < np.mean(fractions) < 0.6  # about rho = 0.25 of every batch
    assert any(r.get("td_demo") for r in metrics(run))
    # each replay reports under its own name: the agent's columns are the agent replay's
    rows = [r for r in metrics(run) if r.get("demos_replay_size")]
    assert len({r["demos_replay_size"] for r in rows}) == 1  # the demonstrations, loaded once
    assert max(float(r["replay_size"]) for r in rows) > float(rows[-1]["demos_replay_size"])  # the agent's, growing


def test_the_demo_replay_is_checkpointed_and_not_loaded_twice(tmp_path, demos):
    run = tmp_path / "r"
    distrl.train("r2d3", env="MountainCar-v0", runtime="inline", total_steps=2000, run_dir=str(run), demos=demos, **RUN)
    ckpt = sorted((run / "checkpoints").glob("step-*"))[-1]
    inserted = json.loads((ckpt / "demos.json").read_text())["storage"]["inserted"]
    assert inserted > 0
    distrl.train("r2d3", env="MountainCar-v0", runtime="inline", total_steps=4000, run_dir=str(run), resume=True)
    final = sorted((run / "checkpoints").glob("step-*"))[-1]
    assert final != ckpt and json.loads((final / "demos.json").read_text())["storage"]["inserted"] == inserted


def test_apex_dqn_and_apex_ddpg_take_demos(tmp_path, demos):
    s = distrl.train("apex-dqn", env="MountainCar-v0", runtime="inline", total_steps=3000, run_dir=str(tmp_path / "q"),
                     demos=demos, demo_ratio=0.5, num_envs=4, min_replay=100, batch_size=16, log_interval_s=0.05)
    assert s["learner_updates"] > 0
    assert np.mean([float(r["demo_fraction"]) for r in metrics(tmp_path / "q") if r.get("demo_fraction")]) > 0.3
    rng = np.random.default_rng(0)
    eps = Episodes([rng.normal(size=(11, 3)).astype(np.float32)], [rng.uniform(-2, 2, (10, 1)).astype(np.float32)],
                   [rng.normal(size=10).astype(np.float32)], [np.zeros(10, bool)], [np.eye(10, dtype=bool)[-1]],
                   "Pendulum-v1")
    import gymnasium as gym

    env = gym.make("Pendulum-v1")
    eps.observation_space, eps.action_space = env.observation_space, env.action_space
    write_episodes(tmp_path / "pd", eps, "random")
    s = distrl.train("apex-ddpg", env="Pendulum-v1", runtime="inline", total_steps=1500, run_dir=str(tmp_path / "d"),
                     demos=str(tmp_path / "pd"), demo_ratio=0.5, num_envs=4, min_replay=100, batch_size=16,
                     log_interval_s=0.05)
    assert s["learner_updates"] > 0
    assert any(r.get("demo_fraction") for r in metrics(tmp_path / "d"))


def test_the_large_margin_loss_trains_on_demo_steps_only(tmp_path, demos):
    """``demo_margin`` adds DQfD's supervised term on the demonstrated steps: the same seed on ``inline`` (one
    process, deterministic) trains otherwise equal runs to other losses, finite; without demos in the batch
    (``demo_ratio=0``) the setting changes nothing."""
    def losses(name, **kw):
        distrl.train("r2d3", env="MountainCar-v0", runtime="inline", total_steps=2000, run_dir=str(tmp_path / name),
                     demos=demos, seed=1, progress=False, log_interval_s=1e9, **SMALL, **kw)  # one row, at the end
        return [float(r["loss"]) for r in metrics(tmp_path / name) if r.get("loss")]

    plain, margin = losses("plain"), losses("margin", demo_margin=0.8)
    assert plain and margin and all(np.isfinite(margin)) and plain != margin
    assert losses("none-plain", demo_ratio=0.0) == losses("none-margin", demo_ratio=0.0, demo_margin=0.8)
