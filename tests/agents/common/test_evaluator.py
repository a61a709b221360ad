"""The periodic evaluator: a role added to every system by its builder, no backend involved."""

import csv

import gymnasium as gym
import numpy as np
import pytest
import torch

import distrl
from distrl.agents.common.evaluator import Evaluator, from_weights
from distrl.errors import ConfigError


class Fixed(torch.nn.Module):
    """A Pendulum 'policy' that pushes against the angular velocity (a known, deterministic controller)."""

    def __init__(self):
        super().__init__()
        self.gain = torch.nn.Parameter(torch.tensor([-1.5]))

    def greedy(self, obs):
        return self.gain * obs[:, 2:3]


class Handle:
    seconds = 0.0

    def pull(self, newer_than):
        return (np.array([-1.5], np.float32), 3) if newer_than < 3 else None


def test_each_copy_plays_one_greedy_episode_with_the_pulled_weights():
    """Independent reference: the same controller on single envs seeded seed+i, stepped by hand."""
    ev = Evaluator("Pendulum-v1", Fixed(), episodes=3, seed=10, handle=Handle(), load=from_weights)
    info = ev.step()
    expected = []
    for i in range(3):
        env = gym.make("Pendulum-v1")
        obs, _ = env.reset(seed=10 + i)
        total, done = 0.0, False
        while not done:
            obs, r, term, trunc, _ = env.step(np.clip([-1.5 * obs[2]], -2, 2).astype(np.float32))
            total, done = total + r, term or trunc
        expected.append(total)
    assert info["metrics"]["eval_return_mean"] == pytest.approx(np.mean(expected), rel=1e-4)
    assert info["metrics"]["eval_version"] == 3
    assert ev.step()["metrics"]["eval_return_mean"] == info["metrics"]["eval_return_mean"]  # same seeds every time


CASES = {  # every system, tiny budgets, on the deterministic inline runtime
    "a2c": dict(env="CartPole-v1", num_envs=8, unroll_length=8),
    "impala": dict(env="CartPole-v1", num_envs=8, num_actors=2, unroll_length=8),
    "seed": dict(env="CartPole-v1", num_envs=8, num_actors=2, unroll_length=8),
    "apex-dqn": dict(env="CartPole-v1", num_envs=4, num_actors=2, min_replay=100, batch_size=32),
    "apex-ddpg": dict(env="Pendulum-v1", num_envs=2, num_actors=2, min_replay=100, batch_size=32, hidden=(32, 32)),
    "a3c": dict(env="CartPole-v1", num_envs=4, num_actors=2, t_max=8, segments_per_report=2),
    "gorila": dict(env="CartPole-v1", num_envs=4, num_actors=2, min_replay=100, batch_size=32),
    "r2d2": dict(env="distrl/CartPoleNoVelocity-v1", num_envs=4, num_actors=1, unroll_length=10, min_replay=20,
                 batch_size=8, sequence_length=10, overlap=5, burn_in=2, n_step=3),
    "seed-r2d2": dict(env="distrl/CartPoleNoVelocity-v1", num_envs=4, num_actors=1, unroll_length=10, min_replay=20,
                      batch_size=8, sequence_length=10, overlap=5, burn_in=2, n_step=3),
}


@pytest.mark.parametrize("system", sorted(CASES))
def test_every_system_reports_periodic_evaluations_and_keeps_the_best(tmp_path, system):
    """Every interval's evaluation, and at the budget's end one of the final weights (the one due at the last batch
    would never run, and one played before the last update is not the final policy's score)."""
    summary = distrl.train(system, runtime="inline", total_steps=3000, eval_interval_steps=1000, eval_episodes=2,
                           run_dir=str(tmp_path / "r"), log_interval_s=1e-9, **CASES[system])
    rows = list(csv.DictReader(open(tmp_path / "r" / "metrics.csv")))
    evals = [float(r["eval_return_mean"]) for r in rows if r.get("eval_return_mean")]
    assert len(evals) >= 2 and all(np.isfinite(evals))  # at 1000 and 2000 env steps (and maybe 3000)
    last = [r for r in rows if r.get("eval_return_mean")][-1]
    assert int(last["env_steps"]) == summary["env_steps"]  # the curve ends with the final weights' evaluation
    if system not in ("a3c", "gorila"):  # (where workers learn, eval_version sums the parameter shards' versions)
        assert int(float(last["eval_version"])) == summary["learner_updates"]
    from distrl.runtime.run.best_policy import read_best

    assert read_best(tmp_path / "r")["eval_return_mean"] == pytest.approx(max(evals), rel=1e-5)  # one per row here
    policy = distrl.load_policy(tmp_path / "r")  # the best weights load into the system's model (A3C's and
    assert policy.snapshot == "best"  # GORILA's from their parameter servers, R2D2's recurrent one)


class Changing:
    """Weights that get worse, then as good again: gains 0, -1.5, 0 at versions 1, 2, 3 (damping alone swings the
    pendulum less high than no torque does: -1955 against -1655 on these seeds)."""

    def __init__(self):
        self.gains = iter([(0.0, 1), (-1.5, 2), (0.0, 3)])

    def pull(self, newer_than):
        gain, version = next(self.gains)
        return np.array([gain], np.float32), version


def test_an_evaluation_at_least_as_good_as_the_best_so_far_sends_the_weights_it_played():
    ev = Evaluator("Pendulum-v1", Fixed(), episodes=2, seed=3, handle=Changing(), load=from_weights)
    first, worse, tie = ev.step(), ev.step(), ev.step()
    assert worse["metrics"]["eval_return_mean"] < first["metrics"]["eval_return_mean"]
    assert "policy" not in worse
    for info, version in ((first, 1), (tie, 3)):
        assert info["policy"]["version"] == version and info["policy"]["eval_episodes"] == 2
        np.testing.assert_array_equal(info["policy"]["weights"], np.array([0.0], np.float32))


def test_a_run_keeps_its_best_evaluation_and_eval_plays_it_unless_asked_for_the_last(tmp_path):
    """Independent reference: the metrics CSV's evaluations (one per row here) and a policy loaded by hand."""
    from distrl.runtime.run.best_policy import load_best_weights, read_best

    run = tmp_path / "r"
    s = distrl.train("a2c", runtime="inline", total_steps=4000, eval_interval_steps=1000, eval_episodes=2,
                     run_dir=str(run), log_interval_s=1e-9, **CASES["a2c"])
    rows = csv.DictReader(open(run / "metrics.csv"))
    evals = [float(r["eval_return_mean"]) for r in rows if r.get("eval_return_mean")]
    kept = read_best(run)
    assert kept["eval_return_mean"] == pytest.approx(max(evals), rel=1e-5) and kept["eval_episodes"] == 2
    assert 1000 <= kept["env_steps"] <= s["env_steps"]
    assert s["best_policy"] == {k: kept[k] for k in ("eval_return_mean", "eval_episodes", "env_steps")}
    policy = distrl.load_policy(run)
    assert policy.snapshot == "best"
    played = np.concatenate([p.detach().reshape(-1).numpy() for p in policy.model.parameters()])
    np.testing.assert_array_equal(played, load_best_weights(run, kept))
    assert distrl.evaluate(run, episodes=1)["snapshot"] == "best"
    assert distrl.evaluate(run, episodes=1, snapshot="last")["snapshot"] == "last"
    assert distrl.load_policy(run, "last").snapshot == "last"
    assert distrl.record(tmp_path / "demos", run_dir=run, episodes=1, snapshot="last")["episodes"] == 1
    with pytest.raises(ConfigError, match="goes with a RUN_DIR"):
        distrl.record(tmp_path / "more", policy="x:y", env="CartPole-v1", snapshot="best")


def test_only_r2d2_and_seed_r2d2_evaluate_by_default_and_a_setting_turns_it_off():
    from distrl.agents.registry import SYSTEMS, get_system
    from distrl.api import plan_run, system_run_defaults
    from distrl.run_config import RunConfig

    for system in SYSTEMS:
        filled = system_run_defaults(get_system(system), RunConfig())
        expected = (25_000, 10) if system in ("r2d2", "seed-r2d2") else (0, 5)
        assert (filled.eval_interval_steps, filled.eval_episodes) == expected, system

    def evaluation(system, **settings):  # the whole path from the settings given to the program built
        run_cfg, _, _, program = plan_run(system, "distrl/CartPoleNoVelocity-v1", runtime="inline", **settings)[1:]
        assert any(r.name == "evaluator" for r in program.roles) == bool(run_cfg.eval_interval_steps)
        return run_cfg.eval_interval_steps, run_cfg.eval_episodes

    assert evaluation("r2d2") == (25_000, 10)
    assert evaluation("r2d2", eval_interval_steps=0) == (0, 10)
    assert evaluation("apex-dqn") == (0, 5)
    assert evaluation("apex-dqn", eval_interval_steps=500, eval_episodes=3) == (500, 3)


def test_on_local_the_run_ends_with_an_evaluation_of_the_final_weights(tmp_path):
    """APPO on ``local``: 2 batches of 32,768 env steps; the evaluation due at 40k falls on the last batch, so it runs
    after the budget, on the final weights, with the actors held (its process is granted that one step)."""
    summary = distrl.train("appo", env="CartPole-v1", runtime="local", total_steps=60_000, eval_interval_steps=20_000,
                           eval_episodes=2, num_actors=1, run_dir=str(tmp_path / "r"))
    rows = [r for r in csv.DictReader(open(tmp_path / "r" / "metrics.csv")) if r.get("eval_return_mean")]
    assert rows and int(rows[-1]["env_steps"]) == summary["env_steps"]
    assert int(float(rows[-1]["eval_version"])) == summary["learner_updates"]


def test_a_run_cut_by_max_wall_s_plays_no_final_evaluation(tmp_path):
    """The wall-clock cap is a promise about time: nothing more runs after it (an evaluation can take minutes)."""
    distrl.train("a2c", env="CartPole-v1", runtime="inline", total_steps=10**9, max_wall_s=0.5,
                 eval_interval_steps=10**8, eval_episodes=2, num_envs=8, run_dir=str(tmp_path / "r"))
    rows = list(csv.DictReader(open(tmp_path / "r" / "metrics.csv")))
    assert rows and not any(r.get("eval_return_mean") for r in rows)


def test_each_evaluation_has_a_metrics_row_of_its_own(tmp_path):
    """A row's metrics are the mean of its interval's reports: evaluations arriving faster than ``log_interval_s``
    (the bench's CartPole protocol: several a second) would share one averaged figure. Each gets its own row, written
    when it reports, here with no rows by the clock at all."""
    summary = distrl.train("a2c", env="CartPole-v1", runtime="inline", total_steps=20_000, eval_interval_steps=2_000,
                           eval_episodes=1, num_envs=8, log_interval_s=1e6, run_dir=str(tmp_path / "r"))
    rows = [r for r in csv.DictReader(open(tmp_path / "r" / "metrics.csv")) if r.get("eval_return_mean")]
    versions = [float(r["eval_version"]) for r in rows]
    assert len(rows) >= 9 and versions == sorted(set(versions)) and all(v.is_integer() for v in versions)
    assert int(versions[-1]) == summary["learner_updates"]  # and the last played the final weights
