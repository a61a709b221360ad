import contextlib
import json
import os
import signal
import subprocess
import sys
import time

import pytest

import distrl
from tests.conftest import ROOT
from tests.procfs import alive, comm, descendants


def test_impala_inline_smoke(tmp_path):
    s = distrl.train("impala", env="CartPole-v1", runtime="inline", total_steps=20_000, num_actors=2, num_envs=8,
                     batch_unrolls=2, run_dir=str(tmp_path / "r"))
    assert s["env_steps"] >= 20_000 and s["learner_updates"] > 0
    assert s["policy_lag_mean"] is not None and s["policy_lag_mean"] >= 0


def test_impala_local_learns_cartpole(tmp_path):
    """The default budget (1.5M steps, ~8 s of training) on ``local``: training mean past 400, greedy play past 300.

    Spread (``benchmarks/learning_spread.py --cases impala --seeds 0..4 --variants base sse``, 10 runs, with this
    config when it was the default before 0.2): greedy evaluation 500 in every run."""
    s = distrl.train("impala", env="CartPole-v1", runtime="local", run_dir=str(tmp_path / "r"), seed=0)
    assert s["episode_return_mean"] >= 400, s
    assert s["actor_restarts"] == 0 and s["bottleneck"] in ("learner-bound", "actor-bound", "pipeline-bound",
                                                            "transport-bound", "balanced")
    assert s["learner_updates"] == s["env_steps"] // (64 * 8)  # the paper's learner: one update per batch
    ev = distrl.evaluate(tmp_path / "r", episodes=5)
    assert ev["mean_return"] >= 300, ev


def test_impala_has_no_ppo_settings():
    """IMPALA is the paper's learner: PPO's passes and clip are APPO's settings, so asking IMPALA for them is one
    line naming the settings it has."""
    from distrl.api import plan_run
    from distrl.errors import ConfigError

    for name, value in (("ppo_clip", 0.2), ("epochs", 4), ("minibatches", 8), ("minibatch_by", "step")):
        with pytest.raises(ConfigError, match=f"unknown setting '{name}'"):
            plan_run("impala", "CartPole-v1", runtime="inline", **{name: value})


def test_impala_atari_pong_local_smoke(tmp_path):
    pytest.importorskip("ale_py", reason="atari extra not installed")
    pytest.importorskip("cv2", reason="atari extra not installed")
    s = distrl.train("impala", env="ALE/Pong-v5", runtime="local", total_steps=600, num_actors=2, num_envs=2,
                     unroll_length=10, reward_clip=1.0, entropy_coef=0.01, run_dir=str(tmp_path / "pong"))
    assert s["env_steps"] >= 600 and s["learner_updates"] >= 1


@pytest.mark.parametrize("sig,inherited,group", [(signal.SIGINT, False, False), (signal.SIGINT, True, False),
                                                 (signal.SIGINT, False, True), (signal.SIGTERM, False, False),
                                                 (signal.SIGHUP, False, False)],
                         ids=["ctrl-c", "ctrl-c-started-with-sigint-ignored", "ctrl-c-to-the-process-group", "sigterm",
                              "sighup"])
def test_signal_stops_everything_and_checkpoints(tmp_path, sig, inherited, group):
    """Ctrl-C, SIGTERM and SIGHUP (a closed terminal, a dropped SSH session) end a run the same way; Ctrl-C
    also where the run was started with SIGINT ignored (a script's background job: Python then installs no
    KeyboardInterrupt handler, and the run used to go on), and sent as a terminal sends it, to the whole
    process group (the run, its forkserver and its components: only the run may act on it)."""
    run = tmp_path / "r"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    command = [sys.executable, "-m", "distrl", "train", "impala", "--total-steps", "100000000", "--quiet",
               "--set", "log_interval_s=0.2", "--run-dir", str(run)]  # metrics rows soon: the run is up
    if inherited:  # SIGINT ignored, then exec: the disposition survives exec, as a shell's background job's does (not
        # preexec_fn, whose Python runs in a fork of this process: with gRPC's threads alive here, from an earlier test
        # in this worker, gRPC's fork handler aborted that child once)
        command = [sys.executable, "-c", "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_IGN); "
                   "os.execv(sys.executable, sys.argv[1:])", *command]
    proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=group)
    try:  # whatever fails below, the run is never left running to slow the rest of the suite
        deadline = time.monotonic() + 60
        while not (run / "metrics.csv").exists() or len((run / "metrics.csv").read_text().splitlines()) < 3:
            assert time.monotonic() < deadline and proc.poll() is None, \
                proc.stderr.read() if proc.poll() is not None else "no metrics in time"
            time.sleep(0.1)
        actors = [c for c in descendants(proc.pid) if comm(c).startswith("distrl-actor")]
        assert len(actors) >= 1
        t0 = time.monotonic()
        if group:
            os.killpg(proc.pid, sig)
        else:
            proc.send_signal(sig)
        try:
            out, err = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"the run did not stop within 30 s of signal {sig}") from None
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert time.monotonic() - t0 < 10, "stopping took too long"
    assert "Traceback" not in err, err
    assert not [a for a in actors if alive(a)], "actor processes left behind"
    assert list((run / "checkpoints").glob("step-*"))
    summary = json.loads((run / "summary.json").read_text())
    assert summary["interrupted"] is True and summary["env_steps"] > 0
    assert proc.returncode == 130


def test_a_killed_run_leaves_no_process(tmp_path):
    """SIGKILL gives the run no chance to stop anything: its forkserver sees the run gone and exits, and the
    kernel sends each component SIGTERM as its parent (the server) dies (PR_SET_PDEATHSIG)."""
    run = tmp_path / "r"
    proc = subprocess.Popen([sys.executable, "-m", "distrl", "train", "impala", "--total-steps", "100000000", "--quiet",
                             "--set", "log_interval_s=0.2", "--run-dir", str(run)],
                            env=dict(os.environ, PYTHONPATH=str(ROOT)), stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    family = []
    try:
        deadline = time.monotonic() + 60
        while not (run / "metrics.csv").exists() or len((run / "metrics.csv").read_text().splitlines()) < 2:
            assert time.monotonic() < deadline and proc.poll() is None, \
                proc.stderr.read() if proc.poll() is not None else "no metrics in time"
            time.sleep(0.1)
        family = descendants(proc.pid)
        assert any(comm(c).startswith("distrl-actor") for c in family)
        proc.kill()
        proc.wait(timeout=30)
        deadline = time.monotonic() + 30
        while [c for c in family if alive(c)] and time.monotonic() < deadline:
            time.sleep(0.1)  # a bounded wait: each goes when it notices, at its next poll
        assert not [c for c in family if alive(c)], "processes left behind"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for c in family:
            if alive(c):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(c, signal.SIGKILL)


def test_env_exception_restarts_the_actor_and_training_goes_on(tmp_path, monkeypatch):
    marker = tmp_path / "crash-once"
    marker.write_text("x")
    monkeypatch.setenv("DISTRL_CRASH_MARKER", str(marker))
    s = distrl.train("impala", env="tests.envs.crashing:DistrlCrashOnce-v0", runtime="local", total_steps=30_000,
                     num_actors=2, num_envs=4, run_dir=str(tmp_path / "r"))
    assert not marker.exists()  # an actor did hit the failure
    assert s["actor_restarts"] == 1 and s["env_steps"] >= 30_000


def test_learner_exception_stops_the_run_and_keeps_the_checkpoint(tmp_path, monkeypatch):
    from distrl.agents.impala.learner import ImpalaLearner

    original = ImpalaLearner.step
    calls = {"n": 0}

    def failing_step(self, batch):
        calls["n"] += 1
        if calls["n"] == 40:
            raise FloatingPointError("simulated learner failure")
        return original(self, batch)

    monkeypatch.setattr(ImpalaLearner, "step", failing_step)
    with pytest.raises(FloatingPointError, match="simulated learner failure"):
        distrl.train("impala", env="CartPole-v1", runtime="local", total_steps=10**8, num_actors=2,
                     num_envs=8, checkpoint_interval_s=0.05, run_dir=str(tmp_path / "r"))
    assert list((tmp_path / "r" / "checkpoints").glob("step-*"))


def test_impala_inline_is_deterministic(tmp_path):
    import csv

    tables = []
    for name in ("a", "b"):
        distrl.train("impala", env="CartPole-v1", runtime="inline", total_steps=16_000, num_actors=2, num_envs=8,
                     seed=5, log_interval_s=1e9, run_dir=str(tmp_path / name))
        with open(tmp_path / name / "metrics.csv") as f:
            tables.append(
                [
                    {
                        k: v
                        for k, v in r.items()
                        if not k.startswith("time_") and k not in ("wall_s", "sps", "learner_wait_frac")
                    }
                    for r in csv.DictReader(f)
                ]
            )
    assert tables[0] == tables[1]


def test_metrics_rows_carry_the_time_split(tmp_path):
    distrl.train("impala", env="CartPole-v1", runtime="local", total_steps=30_000, num_actors=2, num_envs=16,
                 log_interval_s=0.2, run_dir=str(tmp_path / "r"))
    header = (tmp_path / "r" / "metrics.csv").read_text().splitlines()[0].split(",")
    for col in ("time_env_s", "time_inference_s", "time_learn_s", "time_wait_s", "time_transport_s",
                "learner_wait_frac", "policy_lag_mean", "actor_restarts", "sps"):
        assert col in header


def test_a_crash_loop_ends_the_run_with_one_line_a_summary_and_the_env_error_once(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "distrl",
            "train",
            "impala",
            "--env",
            "tests.envs.crashing:DistrlAlwaysCrash-v0",
            "--total-steps",
            "100000",
            "--quiet",
            "--run-dir",
            str(tmp_path / "r"),
            "--set",
            "num_actors=2",
            "--set",
            "num_envs=2",
            "--set",
            "max_restarts=2",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert r.returncode == 1, r.stderr
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("distrl: stopped:") and "simulated bug in the env's step" in last, last
    assert r.stderr.count("Traceback") == 1  # printed once for the run (both actors hit it), then only counted
    assert r.stderr.count("restarting it") <= 4  # each actor's 1st and 2nd restart (then 4th, 8th, ...)
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    assert "crash" not in summary.get("bottleneck", "") and "simulated bug" in summary["stopped"]


def test_the_normalisers_run_end_to_end_and_reach_the_actors_and_eval(tmp_path):
    """obs_norm + value_norm on ``local``: the learner's statistics are in the checkpoint, and ``distrl eval``
    (which builds the model from the run's config) loads and plays with them."""
    from safetensors.torch import load_file

    s = distrl.train("impala", env="Pendulum-v1", runtime="local", total_steps=20_000, num_envs=8,
                     obs_norm=True, value_norm=True, normalize_advantages=True, run_dir=str(tmp_path / "r"))
    assert s["learner_updates"] >= 2
    model = load_file(sorted((tmp_path / "r" / "checkpoints").glob("step-*"))[-1] / "model.safetensors")
    assert model["obs_norm.count"] > 0 and float(model["popart.sigma"]) != 1.0
    assert bool((model["obs_norm.std"] != 1.0).all())
    ev = distrl.evaluate(tmp_path / "r", episodes=2)
    assert -16.3 * 200 < ev["mean_return"] <= 0  # within what Pendulum can return (cost <= 16.3 a step, 200 steps)
