import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

import distrl
from distrl.agents.impala import OLDER_RUN_DEFAULTS as ONE_STEP

# IMPALA's one-step config with APPO's one update per batch: what APPO's passes are compared with
ONE_STEP_APPO = dict(ONE_STEP, optimizer_eps=0.01, ppo_clip=0.0, epochs=1, minibatches=1, minibatch_by="stream",
                     obs_norm=False)


def test_appo_local_learns_cartpole(tmp_path):
    """The default config and budget (500k steps, ~8 s of training) on ``local``: training mean past 400, greedy play
    past 300. Measured with minibatches of 512 (``distrl bench --suite full --systems ppo appo seed``): training means
    500 on seeds 0-2, the threshold of 475 reached in 5.2-5.6 s, greedy 500 on each."""
    s = distrl.train("appo", env="CartPole-v1", runtime="local", run_dir=str(tmp_path / "r"), seed=0)
    assert s["episode_return_mean"] >= 400, s
    assert s["actor_restarts"] == 0
    ev = distrl.evaluate(tmp_path / "r", episodes=5)
    assert ev["mean_return"] >= 300, ev


def test_appo_inline_learns_cartpole_from_few_env_steps(tmp_path):
    """APPO's clipped surrogate over 4 passes of 4 minibatches per batch over IMPALA's one-step config (64 envs,
    unrolls of 8, RMSProp 2e-3), inline: the training mean passes 100 within
    100k env steps (measured on seeds 0-3: 205, 170, 137, 262; the one-step config's, seed 0, the same budget: 38),
    16 applied updates per batch."""
    s = distrl.train("appo", env="CartPole-v1", runtime="inline", total_steps=100_000, seed=0,
                     **dict(ONE_STEP_APPO, ppo_clip=0.2, epochs=4, minibatches=4), run_dir=str(tmp_path / "r"))
    assert s["episode_return_mean"] >= 100, s
    assert s["learner_updates"] == 16 * (s["env_steps"] // (64 * 8))


@pytest.mark.parametrize("minibatch_by", ["stream", "step"])
def test_appo_on_its_own_policy_takes_impalas_step(minibatch_by):
    """Where the batch's behaviour policy is the learner's own (pi/mu = 1), the clipped surrogate over V-trace's
    advantages without rho has the gradient of the paper's loss: one update of APPO's learner and one of IMPALA's,
    from the same weights, end at the same weights."""
    import numpy as np
    import torch

    from distrl.api import plan_run

    small = dict(num_envs=4, unroll_length=5, runtime="inline")
    paper = plan_run("impala", "CartPole-v1", **small)[4].make_learner({})
    appo = plan_run("appo", "CartPole-v1", **dict(ONE_STEP_APPO, **small, ppo_clip=0.2,
                                                  minibatch_by=minibatch_by))[4].make_learner({})
    appo.model.load_state_dict(paper.model.state_dict())
    rng = np.random.default_rng(0)
    batch = {"obs": rng.normal(size=(6, 4, 4)).astype(np.float32), "actions": rng.integers(0, 2, (5, 4)),
             "rewards": rng.normal(size=(5, 4)).astype(np.float32), "terminated": rng.random((5, 4)) < 0.2,
             "truncated": np.zeros((5, 4), bool), "valid": rng.random((5, 4)) > 0.2}
    with torch.no_grad():
        logp = paper.model.evaluate_unroll(torch.as_tensor(batch["obs"]), torch.as_tensor(batch["actions"]))[0]
    # a reset step's is not real
    batch["behaviour_logp"] = np.where(batch["valid"], logp.numpy(), 0.0).astype(np.float32)
    paper.step(batch)
    appo.step(batch)
    assert paper.version == appo.version == 1
    np.testing.assert_allclose(appo.get_weights(), paper.get_weights(), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("system", ["appo", "seed"])
def test_more_minibatches_than_env_streams_or_steps_is_one_config_error(system, tmp_path):
    from distrl.errors import ConfigError

    with pytest.raises(ConfigError, match="at most 16"):
        distrl.train(system, env="CartPole-v1", runtime="inline", total_steps=1000, num_envs=8, batch_unrolls=2,
                     minibatch_by="stream", minibatches=17, run_dir=str(tmp_path / "r"))
    with pytest.raises(ConfigError, match=r"steps .* at most 80"):
        distrl.train(system, env="CartPole-v1", runtime="inline", total_steps=1000, num_envs=8, batch_unrolls=2,
                     unroll_length=5, minibatch_by="step", minibatches=81, run_dir=str(tmp_path / "r"))
    assert not (tmp_path / "r").exists()


def test_ppo_minibatches_of_steps_learn_cartpole_inline(tmp_path):
    """PPO's passes (targets fixed per batch, minibatches of steps drawn at random) over IMPALA's one-step config,
    inline: the training mean passes 150 within 100k env steps (measured on seeds 0-3: 480, 372, 232, 298; with
    minibatches of env streams, the test above: 137-262), 4 x 8 applied updates per batch."""
    s = distrl.train("appo", env="CartPole-v1", runtime="inline", total_steps=100_000, seed=0,
                     **dict(ONE_STEP_APPO, ppo_clip=0.2, epochs=4, minibatches=8, minibatch_by="step"),
                     run_dir=str(tmp_path / "r"))
    assert s["episode_return_mean"] >= 150, s
    assert s["learner_updates"] == 32 * (s["env_steps"] // (64 * 8))


@settings(max_examples=60, deadline=None)
@given(envs=st.integers(1, 16), unrolls=st.integers(1, 3), length=st.integers(1, 8), minibatches=st.integers(0, 400),
       by=st.sampled_from(["stream", "step"]))
def test_minibatches_plan_exactly_up_to_the_streams_or_steps_of_a_batch(envs, unrolls, length, minibatches, by):
    """Generated settings: a run plans when each minibatch can hold at least one env stream (or step), and is one
    ConfigError naming the limit otherwise; 0 (about 64 steps each, or the whole batch) always plans."""
    from distrl.api import plan_run
    from distrl.errors import ConfigError

    most = envs * unrolls * (length if by == "step" else 1)
    settings_ = dict(num_envs=envs, batch_unrolls=unrolls, unroll_length=length, minibatches=minibatches,
                     minibatch_by=by, runtime="inline")
    if minibatches > most:
        with pytest.raises(ConfigError, match=f"give at most {most}$"):
            plan_run("appo", "CartPole-v1", **settings_)
    else:
        plan_run("appo", "CartPole-v1", **settings_)


@pytest.mark.parametrize("by, steps, size, want", [("step", 4096, 512, 8), ("step", 32768, 512, 64),
                                                   ("step", 12, 512, 1), ("step", 1300, 512, 2),
                                                   ("step", 4096, 64, 64), ("stream", 4096, 512, 1)])
def test_minibatches_0_cuts_steps_into_minibatches_of_about_minibatch_size(by, steps, size, want):
    """The default count: minibatches of about ``minibatch_size`` steps (a batch of fewer steps is one minibatch),
    whatever the batch size, so SEED's batches get the same minibatch as APPO's; by env stream, the whole batch. A
    count given is taken as it is."""
    from distrl.agents.appo.config import APPOConfig
    from distrl.agents.common.settings import minibatch_count

    assert minibatch_count(APPOConfig(minibatches=0, minibatch_by=by, minibatch_size=size), steps) == want
    assert minibatch_count(APPOConfig(minibatches=3, minibatch_by=by, minibatch_size=size), steps) == 3


@pytest.mark.parametrize("system", ["appo", "ppo", "seed"])
def test_a_run_saved_before_minibatch_size_existed_resumes_with_minibatches_of_64(system, tmp_path):
    """Before ``minibatch_size`` existed, minibatches of steps were 64 steps each; a run saved then (its config without
    the setting) resumes with 64, not today's default (512; SEED's 256)."""
    from distrl.agents.registry import get_system
    from distrl.api import resolve_configs
    from distrl.runtime.run.run_dir import read_config

    run = tmp_path / "r"
    distrl.train(system, env="CartPole-v1", runtime="inline", total_steps=64, num_envs=2, unroll_length=8,
                 run_dir=str(run))
    path = run / "config.yaml"
    data = yaml.safe_load(path.read_text())
    assert data["system_config"].pop("minibatch_size") == get_system(system).Config().minibatch_size
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    assert resolve_configs(system, {}, read_config(run))[2].minibatch_size == 64


def _as_saved_by_0_2(run, system: str) -> None:
    """Rewrite a run dir as distrl 0.2 would have saved it under ``system``'s name (config.yaml and the checkpoints'
    state.json), the settings unchanged."""
    import json

    path = run / "config.yaml"
    data = yaml.safe_load(path.read_text())
    data["system"] = system
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    for state in run.glob("checkpoints/step-*/state.json"):
        counters = json.loads(state.read_text())
        counters["system"] = system
        state.write_text(json.dumps(counters))


def test_an_impala_run_saved_with_appos_passes_loads_and_resumes_as_appo(tmp_path):
    """distrl 0.2's ``impala`` default was APPO: such a run dir evaluates as appo and resumes with ``distrl train
    appo --resume`` (its checkpoints still say impala); ``train impala --resume`` on it is one line naming appo."""
    from distrl.errors import ConfigError

    run = tmp_path / "r"
    small = dict(env="CartPole-v1", runtime="inline", num_envs=4, unroll_length=8)
    distrl.train("appo", total_steps=600, run_dir=str(run), **small)
    _as_saved_by_0_2(run, "impala")
    assert distrl.load_policy(run).system == "appo"
    assert distrl.evaluate(run, episodes=1)["episodes"] == 1
    with pytest.raises(ConfigError, match=r"holds a run of appo \(saved as impala by distrl 0.2.*distrl train appo"):
        distrl.train("impala", resume=True, run_dir=str(run), total_steps=1200, **small)
    s = distrl.train("appo", resume=True, run_dir=str(run), total_steps=1200, **small)
    assert s["env_steps"] >= 1200
    assert yaml.safe_load((run / "config.yaml").read_text())["system"] == "appo"


def test_an_appo_run_saved_before_obs_norm_existed_loads_and_resumes_without_it(tmp_path):
    """appo normalises its observations by default since 2026-12-07; a run whose config.yaml predates the setting
    ran without the normaliser (its checkpoint holds none): it loads and resumes so (``OLDER_RUN_DEFAULTS``)."""
    run = tmp_path / "r"
    small = dict(env="CartPole-v1", runtime="inline", num_envs=4, unroll_length=8)
    distrl.train("appo", total_steps=600, run_dir=str(run), obs_norm=False, **small)
    path = run / "config.yaml"
    data = yaml.safe_load(path.read_text())
    data["system_config"].pop("obs_norm")
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    assert distrl.load_policy(run).model.obs_norm is None
    assert distrl.train("appo", resume=True, run_dir=str(run), total_steps=1200, **small)["env_steps"] >= 1200
    assert yaml.safe_load(path.read_text())["system_config"]["obs_norm"] is False


def test_an_impala_run_saved_with_one_step_stays_impala(tmp_path):
    """A 0.2 ``impala`` run with the one-step values of APPO's settings was IMPALA: it
    resumes as impala, those settings dropped."""
    run = tmp_path / "r"
    small = dict(env="CartPole-v1", runtime="inline", num_envs=4, unroll_length=8)
    distrl.train("impala", total_steps=600, run_dir=str(run), **small)
    path = run / "config.yaml"
    data = yaml.safe_load(path.read_text())
    data["system_config"].update(ppo_clip=0.0, epochs=1, minibatches=1, minibatch_by="stream")
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    s = distrl.train("impala", resume=True, run_dir=str(run), total_steps=1200, **small)
    assert s["env_steps"] >= 1200
    assert "ppo_clip" not in yaml.safe_load(path.read_text())["system_config"]
