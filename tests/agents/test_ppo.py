import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

import distrl
from tests.agents.learning import scores
from tests.agents.test_a2c import batch_of


def test_ppo_learns_cartpole(tmp_path):
    """The default config, inline, seed 0: the training mean passes 400 within 196,608 env steps (12 batches of
    16 x 1024, ~4 s; random: ~22). Measured with minibatches of 512 and the rate decaying over those steps: 500, 500,
    500 and 497 on seeds 0-3; at 98,304 steps it was 184-207, too near any bar."""
    got = scores("ppo", (0,), tmp_path, score="train", env="CartPole-v1", total_steps=196_608, runtime="inline")
    assert got[0] >= 400, got


def test_shuffled_passes_are_deterministic_inline(tmp_path):
    """Same seed, same numbers through PPO's shuffled minibatches: every column of metrics.csv except the wall-clock
    ones."""
    import csv

    tables = []
    for name in ("a", "b"):
        distrl.train("ppo", env="CartPole-v1", total_steps=8_000, runtime="inline", run_dir=str(tmp_path / name),
                     seed=3, num_envs=8, unroll_length=32, log_interval_s=1e9)  # one row, at the end
        with open(tmp_path / name / "metrics.csv") as f:
            tables.append([{k: v for k, v in r.items() if not k.startswith("time_")
                            and k not in ("wall_s", "sps", "learner_wait_frac")} for r in csv.DictReader(f)])
    assert tables[0] == tables[1] and tables[0][0]["episodes"] != "0"


def _learner(system: str, **config):
    from distrl.api import plan_run

    return plan_run(system, "CartPole-v1", runtime="inline", num_envs=4, unroll_length=5, **config)[4].make_learner({})


def test_one_pass_of_one_minibatch_takes_a2cs_step():
    """At the batch's start the policy is the one that acted (ratio 1), where PPO's clipped surrogate has the gradient
    of the plain policy gradient: PPO's learner with one pass of one minibatch ends at the same weights as A2C's one
    update with the same settings (the minibatch's steps shuffled, which a mean over them does not see)."""
    import numpy as np

    same = dict(gamma=0.99, gae_lambda=0.95, lr=1e-3, optimizer="adam", entropy_coef=0.01, normalize_advantages=True,
                value_norm=False)
    paper, ppo = _learner("a2c", **same), _learner("ppo", epochs=1, minibatches=1, ppo_clip=0.2, **same)
    ppo.model.load_state_dict(paper.model.state_dict())
    start, batch = paper.get_weights().copy(), batch_of()
    paper.step(batch)
    ppo.step(batch)
    assert paper.version == ppo.version == 1 and not np.allclose(paper.get_weights(), start)
    np.testing.assert_allclose(ppo.get_weights(), paper.get_weights(), rtol=1e-5, atol=1e-7)


def test_passes_make_epochs_times_minibatches_updates_and_skip_a_nonfinite_batch_whole():
    import numpy as np

    learner = _learner("ppo", epochs=3, minibatches=4)
    out = learner.step(batch_of())
    assert learner.version == 12 and "grad_norm" in out and out["nonfinite_skipped"] == 0
    before = learner.get_weights().copy()
    bad = batch_of(1)
    bad["rewards"][2, 1] = np.nan
    out = learner.step(bad)
    assert out["nonfinite_skipped"] == 1 and learner.version == 12
    np.testing.assert_array_equal(learner.get_weights(), before)


@given(envs=st.integers(1, 6), length=st.integers(1, 6), minibatches=st.integers(0, 40))
@settings(max_examples=40, deadline=None)
def test_more_minibatches_than_steps_is_one_config_error(envs, length, minibatches):
    """Generated batch shapes: up to num_envs * unroll_length minibatches plan, one more is a ConfigError naming
    the most there can be."""
    from distrl.api import plan_run
    from distrl.errors import ConfigError

    kw = dict(runtime="inline", num_envs=envs, unroll_length=length, minibatches=minibatches, epochs=2)
    if minibatches > envs * length:
        with pytest.raises(ConfigError, match=f"give at most {envs * length}$"):
            plan_run("ppo", "CartPole-v1", **kw)
    else:
        plan_run("ppo", "CartPole-v1", **kw)


def _rename(run, system: str) -> None:
    import json

    path = run / "config.yaml"
    data = yaml.safe_load(path.read_text())
    data["system"] = system
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    for state in run.glob("checkpoints/step-*/state.json"):
        state.write_text(json.dumps({**json.loads(state.read_text()), "system": system}))


def test_an_a2c_run_saved_with_ppos_passes_loads_and_resumes_as_ppo(tmp_path):
    """distrl 0.2's ``a2c`` default was PPO: such a run dir (config.yaml and checkpoints saying a2c) evaluates as ppo
    and resumes with ``distrl train ppo --resume``; ``distrl train a2c --resume`` on it is one line naming ppo, exit 2,
    the run dir as it was."""
    from distrl.cli import main

    run = tmp_path / "r"
    small = dict(env="CartPole-v1", runtime="inline", num_envs=4, unroll_length=8)
    distrl.train("ppo", total_steps=600, run_dir=str(run), **small)
    _rename(run, "a2c")
    before = (run / "config.yaml").read_text()
    assert distrl.load_policy(run).system == "ppo"
    assert main(["train", "a2c", "--resume", "--run-dir", str(run), "--total-steps", "1200", "--quiet"]) == 2
    assert (run / "config.yaml").read_text() == before
    s = distrl.train("ppo", resume=True, run_dir=str(run), total_steps=1200, **small)
    assert s["env_steps"] >= 1200
    # a resume that migrated config.yaml but wrote no checkpoint of its own leaves only checkpoints saying a2c
    for state in run.glob("checkpoints/step-*/state.json"):
        import json

        state.write_text(json.dumps({**json.loads(state.read_text()), "system": "a2c"}))
    assert yaml.safe_load((run / "config.yaml").read_text())["system"] == "ppo"
    assert distrl.evaluate(run, episodes=1, snapshot="last")["episodes"] == 1
    assert distrl.train("ppo", resume=True, run_dir=str(run), total_steps=1800, **small)["env_steps"] >= 1800


def test_an_a2c_run_saved_with_one_update_stays_a2c(tmp_path):
    """A 0.2 ``a2c`` run with ``epochs=1 minibatches=1`` made the paper's one update: it resumes as a2c, PPO's
    settings dropped."""
    run = tmp_path / "r"
    small = dict(env="CartPole-v1", runtime="inline", num_envs=4, unroll_length=8)
    distrl.train("a2c", total_steps=600, run_dir=str(run), **small)
    path = run / "config.yaml"
    data = yaml.safe_load(path.read_text())
    data["system_config"].update(ppo_clip=0.2, epochs=1, minibatches=1)
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    s = distrl.train("a2c", resume=True, run_dir=str(run), total_steps=1200, **small)
    assert s["env_steps"] >= 1200
    assert "epochs" not in yaml.safe_load(path.read_text())["system_config"]
