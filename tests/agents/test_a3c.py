import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import distrl
from distrl.agents.a3c import Config, build
from distrl.config import build as build_config
from distrl.core.system import BuildContext
from distrl.envs import env_spec
from distrl.runtime.backends import make_backend


def test_hogwild_workers_update_the_one_shared_model_and_shared_statistics():
    cfg = build_config(Config, {"num_actors": 2, "num_envs": 4, "segments_per_report": 5})
    program = build(cfg, BuildContext("CartPole-v1", env_spec("CartPole-v1"), 10**6))
    backend = make_backend("local", seed=0)
    backend.open(program)
    shards = backend.services()["params"].shards
    before = [p.detach().clone() for p in shards.model.parameters()]
    backend.start(None)
    try:
        infos = []
        while {i["actor_index"] for i in infos} != {0, 1} and len(infos) < 40:
            infos += backend.poll(0.05)[0]
    finally:
        backend.close()
    assert {i["actor_index"] for i in infos} == {0, 1}  # both worker processes reported
    updates = int(shards.versions.sum())
    # every worker update lands on the shared counter (lock-free increments may rarely collide)
    assert updates >= 0.95 * len(infos) * cfg.segments_per_report
    changed = [not torch.equal(b, p.detach()) for b, p in zip(before, shards.model.parameters())]
    assert all(changed)  # the workers' gradients landed on this process's (shared) model
    steps = [s["step"].item() for s in shards.optimizers[0].state.values()]
    assert min(steps) >= 0.95 * updates  # one shared RMSProp: its step count is the sum over both workers
    square = [s["square_avg"].abs().sum().item() for s in shards.optimizers[0].state.values()]
    assert all(v > 0 for v in square)


@pytest.mark.parametrize("runtime", ["inline", "local"])
def test_a3c_smoke(tmp_path, runtime):
    s = distrl.train("a3c", env="CartPole-v1", runtime=runtime, total_steps=4000, num_actors=2, num_envs=4, t_max=8,
                     segments_per_report=5, run_dir=str(tmp_path / "r"))
    assert s["env_steps"] >= 4000 and s["learner_updates"] > 0
    header = (tmp_path / "r" / "metrics.csv").read_text().splitlines()[0].split(",")
    assert "actor_staleness" in header and "updates_total" in header


def test_a3c_learns_cartpole(tmp_path):
    """150k steps on ``local`` (~5 s) lift the training mean from ~20 (random) past 150.

    Spread (``benchmarks/learning_spread.py --cases a3c --seeds 0..4 --variants base sse``, 10 runs, with this config
    when it was the default before 0.2; on ``local`` the two Hogwild workers' interleaving differs from run to run):
    367-480, median 440."""
    s = distrl.train("a3c", env="CartPole-v1", runtime="local", total_steps=150_000, run_dir=str(tmp_path / "r"),
                     seed=0)
    assert s["episode_return_mean"] >= 150, s
    assert np.isfinite(s["policy_lag_mean"])


def test_linear_schedule_reaches_the_parameter_server_and_survives_a_resume(tmp_path):
    """The run's ``lr`` hyperparameter (linear decay over the budget) is set on the shards from the env steps
    reported; a resumed run continues the same schedule."""
    import csv

    run = tmp_path / "r"
    kw = dict(env="CartPole-v1", runtime="inline", num_actors=2, num_envs=4, segments_per_report=5,
              lr=1e-3, lr_schedule="linear", run_dir=str(run), log_interval_s=1e-9)
    distrl.train("a3c", total_steps=4000, **kw)
    rows = list(csv.DictReader(open(run / "metrics.csv")))
    for r in rows:  # lr = 1e-3 * (1 - progress), progress measured before the row's last reports
        assert float(r["lr"]) == pytest.approx(1e-3 * (1 - float(r["env_steps"]) / 4000), abs=1e-3 * 200 / 4000)
    distrl.train("a3c", total_steps=8000, resume=True, **kw)
    resumed = list(csv.DictReader(open(run / "metrics.csv")))[len(rows):]
    for r in resumed:
        assert float(r["lr"]) == pytest.approx(1e-3 * (1 - float(r["env_steps"]) / 8000), abs=1e-3 * 200 / 8000)


class _CountingParams:
    """A parameter-server handle that records the worker's calls and applies nothing: every applied gradient adds one
    to its version, and ``others`` more land from other workers between a pull and the next push."""

    travels = False
    bytes = 0

    def __init__(self, others: int = 0):
        self.calls, self.version, self.others = [], 0, others

    def pull(self, model):
        self.calls.append("pull")
        return np.array([self.version])

    def push(self, model, versions):
        return self._apply("push", model, versions)

    def exchange(self, model, versions):
        return (*self._apply("exchange", model, versions), np.array([self.version]))

    def _apply(self, call, model, versions):
        self.calls.append(call)
        assert all(p.grad is not None and torch.isfinite(p.grad).all() for p in model.parameters())
        self.version += self.others  # what the other workers pushed meanwhile
        staleness = self.version - int(versions[0])
        self.version += 1
        return 1, 0, float(staleness)


def _worker(params, **settings):
    from distrl.agents.a3c.actor import A3CWorker
    from distrl.agents.a3c.networks import make_model
    from distrl.agents.common.unroll_actor import unroll_spec

    cfg = build_config(Config, {"num_envs": 2, "t_max": 16, "segments_per_report": 2, **settings})
    env = env_spec("CartPole-v1")
    return A3CWorker("CartPole-v1", cfg, unroll_spec(env, cfg.num_envs, cfg.t_max), 0, 0, params,
                     make_model(env, cfg))


def test_a_worker_pushes_a_gradient_per_minibatch_of_its_passes_and_none_for_a_nonfinite_segment():
    """Asynchronous PPO (a departure from the paper, off by default): epochs x minibatches gradients per segment, each
    after the latest parameters came back (an exchange: push and pull in one round trip), the last a plain push (the
    next segment pulls first). The policy lag is the data's age where each gradient lands: with 2 other updates per
    push, the k-th gradient of a segment (k = 0..11) lands 3k + 2 updates after the parameters that acted it. A segment
    with a NaN is skipped
    whole and counted once."""
    from distrl.agents.common.learner_inputs import to_tensors

    params = _CountingParams(others=2)
    worker = _worker(params, epochs=3, minibatches=4)
    try:
        out = worker.step()
        segment = ["pull"] + ["exchange"] * 11 + ["push"]
        assert params.calls == segment * 2 and out["env_steps"] == 2 * 16 * 2 and out["nonfinite_skipped"] == 0
        assert params.version == 2 * 12 * 3  # its own 24 updates and the others' 48
        assert out["version"] == params.version - 2  # the others' last 2 landed after its last pull
        assert out["staleness"] == pytest.approx(np.mean([3 * k + 2 for k in range(12)]))
        b = to_tensors(worker.buffer)
        b["rewards"][3, 1] = float("nan")
        params.calls.clear()
        versions, applied = worker._passes(b, np.array([params.version]), [])
        assert params.calls == [] and applied == 0 and worker.nonfinite == 1
    finally:
        worker.close()


def test_the_papers_update_is_one_push_per_segment_with_the_others_updates_as_its_lag():
    params = _CountingParams(others=3)
    worker = _worker(params, epochs=1, minibatches=1)
    try:
        out = worker.step()
        assert params.calls == ["pull", "push"] * 2 and out["staleness"] == 3.0
        assert params.version == 8 and out["version"] == 5  # pulled at 4, its own push on top
    finally:
        worker.close()


def test_gradients_that_diverge_mid_pass_are_not_pushed_and_count_once_per_segment(monkeypatch):
    """A non-finite loss in the middle of the passes: that gradient is dropped (the copy pulls the latest parameters
    instead), the other minibatches are still pushed, and the segment adds one to ``nonfinite`` however many of its
    gradients diverged."""
    import distrl.agents.a3c.actor as actor

    params = _CountingParams()
    worker = _worker(params, epochs=2, minibatches=3, segments_per_report=1)
    calls = {"n": 0}
    real = actor.update_loss

    def diverging(*args, **kwargs):
        loss, terms = real(*args, **kwargs)
        calls["n"] += 1
        return (loss * float("nan") if calls["n"] in (2, 3) else loss), terms

    monkeypatch.setattr(actor, "update_loss", diverging)
    try:
        out = worker.step()
        assert params.calls == ["pull", "exchange", "pull", "pull", "exchange", "exchange", "push"]
        assert out["nonfinite_skipped"] == 1 and out["version"] == params.version == 4
    finally:
        worker.close()


def test_an_a3c_run_saved_before_the_passes_resumes_with_the_papers_update(tmp_path):
    """Runs saved before ``epochs``/``minibatches`` existed made one gradient per segment; they load and resume so
    (``OLDER_RUN_DEFAULTS``), not with today's passes."""
    import yaml

    run = tmp_path / "r"
    kw = dict(env="CartPole-v1", runtime="inline", num_actors=2, num_envs=4, t_max=5, segments_per_report=5)
    distrl.train("a3c", total_steps=400, epochs=1, minibatches=1, run_dir=str(run), **kw)
    path = run / "config.yaml"
    data = yaml.safe_load(path.read_text())
    for name in ("epochs", "minibatches", "ppo_clip"):
        data["system_config"].pop(name)
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    s = distrl.train("a3c", total_steps=800, resume=True, run_dir=str(run), env="CartPole-v1", runtime="inline")
    assert s["env_steps"] >= 800
    saved = yaml.safe_load(path.read_text())["system_config"]
    assert saved["epochs"] == 1 and saved["minibatches"] == 1


@given(envs=st.integers(1, 6), length=st.integers(1, 6), minibatches=st.integers(0, 40))
@settings(max_examples=30, deadline=None)
def test_more_minibatches_than_a_segment_has_steps_is_one_config_error(envs, length, minibatches):
    """Generated segment shapes: up to num_envs * t_max minibatches plan, one more is a ConfigError naming the most
    there can be."""
    from distrl.api import plan_run
    from distrl.errors import ConfigError

    kw = dict(runtime="inline", num_envs=envs, t_max=length, minibatches=minibatches)
    if minibatches > envs * length:
        with pytest.raises(ConfigError, match=f"give at most {envs * length}$"):
            plan_run("a3c", "CartPole-v1", **kw)
    else:
        plan_run("a3c", "CartPole-v1", **kw)
