"""Runs saved by an older distrl still load: renamed settings and settings added since."""

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

import distrl
from distrl.errors import ConfigError

PAPER = dict(double_q=False, dueling=False, prioritized=False, optimizer="rmsprop", lr_schedule="constant")


def saved_as_older_version(run_dir):
    """Rewrite a GORILA run's config.yaml as a run saved before this version's settings existed."""
    path = run_dir / "config.yaml"
    data = yaml.safe_load(path.read_text())
    cfg = data["system_config"]
    cfg["rmsprop_eps"] = cfg.pop("optimizer_eps")
    for key in PAPER:
        cfg.pop(key)
    path.write_text(yaml.safe_dump(data, sort_keys=False))


def test_an_older_gorila_run_loads_with_the_learner_it_was_trained_with(tmp_path):
    run = tmp_path / "r"
    distrl.train("gorila", env="CartPole-v1", runtime="inline", total_steps=600, num_actors=1, num_envs=4,
                 min_replay=50, batch_size=16, run_dir=str(run), **PAPER)
    saved_as_older_version(run)
    policy = distrl.load_policy(run)
    assert policy.model.value is None  # the plain DQN head it was trained with, not today's dueling one
    assert distrl.evaluate(run, episodes=1)["episodes"] == 1
    s = distrl.train("gorila", env="CartPole-v1", runtime="inline", total_steps=1200, run_dir=str(run), resume=True)
    assert s["env_steps"] >= 1200
    resumed = yaml.safe_load((run / "config.yaml").read_text())["system_config"]
    assert {k: resumed[k] for k in PAPER} == PAPER and "optimizer_eps" in resumed


def test_a_saved_setting_this_version_lacks_is_a_clear_error(tmp_path):
    run = tmp_path / "r"
    distrl.train("gorila", env="CartPole-v1", runtime="inline", total_steps=300, num_actors=1, num_envs=4,
                 min_replay=50, batch_size=16, run_dir=str(run))
    data = yaml.safe_load((run / "config.yaml").read_text())
    data["system_config"]["warp_drive"] = 3
    (run / "config.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    with pytest.raises(ConfigError, match="warp_drive"):
        distrl.load_policy(run)


@settings(max_examples=40, deadline=None)
@given(actors=st.integers(1, 4), batch=st.integers(1, 12), runtime=st.sampled_from(["local", "inline"]))
def test_a_batch_that_could_never_fill_on_local_is_one_line_before_anything_runs(actors, batch, runtime):
    """On ``local`` each actor holds at most ``in_flight`` (2) unrolls the learner has not released: a larger
    batch is refused, naming both ways out; every batch that can fill, and any batch on ``inline``, plans."""
    from distrl.api import plan_run

    if runtime == "local" and batch > 2 * actors:
        with pytest.raises(ConfigError) as e:
            plan_run("impala", None, runtime=runtime, num_actors=actors, batch_unrolls=batch)
        message = str(e.value)
        assert "\n" not in message and f"num_actors >= {-(-batch // 2)}" in message
        assert f"a batch of at most {2 * actors}" in message
    else:
        plan_run("impala", None, runtime=runtime, num_actors=actors, batch_unrolls=batch)


@pytest.mark.parametrize("system", ["r2d2", "seed-r2d2"])
def test_an_r2d2_run_saved_before_obs_norm_existed_resumes_without_it(tmp_path, system):
    """R2D2's default normalises observations (SEED + R2D2's too, since 2026-11-29) and, since 2026-11-30, uses
    advantage learning (R2D2's only); a run saved before the settings existed ran without them, and loads and resumes
    so (``OLDER_RUN_DEFAULTS``), not with today's defaults."""
    run = tmp_path / "r"
    small = dict(num_actors=1, num_envs=4, unroll_length=10, min_replay=20, batch_size=8, replay_size=500,
                 sequence_length=10, overlap=5, burn_in=2, n_step=3)
    distrl.train(system, env="distrl/CartPoleNoVelocity-v1", runtime="inline", total_steps=600, obs_norm=False,
                 run_dir=str(run), **small)
    path = run / "config.yaml"
    data = yaml.safe_load(path.read_text())
    data["system_config"].pop("obs_norm")
    data["system_config"].pop("advantage_learning")
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    assert distrl.load_policy(run).model.obs_norm is None
    s = distrl.train(system, env="distrl/CartPoleNoVelocity-v1", runtime="inline", total_steps=1200, run_dir=str(run),
                     resume=True)
    assert s["env_steps"] >= 1200
    saved = yaml.safe_load(path.read_text())["system_config"]
    assert saved["obs_norm"] is False and saved["advantage_learning"] == 0.0


def test_r2d2_moved_its_defaults_seed_r2d2_kept_the_period_it_was_measured_with_and_r2d3_its_own():
    from distrl.agents.r2d2.config import R2D2Config
    from distrl.agents.r2d3.config import R2D3Config
    from distrl.agents.seed_r2d2.config import SeedR2D2Config

    def horizon(c):
        return c.gamma, c.target_update_period, c.obs_norm, c.advantage_learning

    assert horizon(R2D2Config()) == (0.997, 500, True, 0.5)
    assert horizon(SeedR2D2Config()) == (0.997, 200, True, 0.0)  # the period and operator its runs were measured with
    assert horizon(R2D3Config()) == (0.99, 100, False, 0.0)


def _fixed_settings():
    import dataclasses

    from distrl.agents.registry import SYSTEMS, get_system

    return [(system, f) for system in SYSTEMS for f in dataclasses.fields(get_system(system).Config)
            if f.metadata.get("fixed")]


FIXED = _fixed_settings()


def test_the_settings_that_define_what_a_checkpoint_holds_are_fixed_on_resume():
    import dataclasses

    from distrl.agents.registry import SYSTEMS, get_system
    from distrl.config import describe

    named = {(system, f.name) for system in SYSTEMS for f in dataclasses.fields(get_system(system).Config)
             if f.name in ("obs_norm", "value_norm", "value_rescale_eps", "fixed_head_slack")}
    assert named == {(system, f.name) for system, f in FIXED} and ("apex-dqn", "value_rescale_eps") in named
    docs = {name: doc for name, _, _, doc in describe(get_system("impala").Config)}  # what `distrl list` prints
    assert "Fixed on --resume: the network was trained on inputs made with it." in docs["obs_norm"]
    assert "Fixed on --resume" not in docs["lr"]


def other_value(field, saved):
    """A strategy of valid values other than ``saved`` for ``field`` (a bool or an optional float)."""
    if isinstance(field.default, bool):
        return st.just(not saved)
    values = st.floats(0.0, 10.0, allow_nan=False) | st.sampled_from(["0.5", "1e-3", "2"])
    if field.type in ("float | None",):
        values = values | st.none()
    return values.filter(lambda v: v is None or float(v) != saved if saved is not None else v is not None)


def saved_run(tmp_path_factory, system: str, **settings):
    from distrl.api import resolve_configs
    from distrl.runtime.run.run_dir import write_config

    run = tmp_path_factory.mktemp("run")
    _, run_cfg, sys_cfg = resolve_configs(system, settings)
    write_config(run, system, run_cfg, sys_cfg)
    return run, sys_cfg


@pytest.mark.parametrize("case", FIXED, ids=[f"{system}-{f.name}" for system, f in FIXED])
@settings(max_examples=8, deadline=None)
@given(data=st.data())
def test_a_resumed_run_cannot_change_them_and_can_repeat_them(tmp_path_factory, case, data):
    """Generated values (numbers, the strings a command line gives, none): a changed one is one line naming the
    setting, the run's value and why; the run's own value (given again, as a config file of the first run would)
    is accepted. Through ``resolve_configs``, the step of ``plan_run`` that reads the saved settings (no program is
    built: R2D3's would want demonstrations)."""
    from distrl.api import resolve_configs
    from distrl.runtime.run.run_dir import read_config

    system, field = case
    run, sys_cfg = saved_run(tmp_path_factory, system)
    saved = getattr(sys_cfg, field.name)
    other = data.draw(other_value(field, saved), label="value")
    with pytest.raises(ConfigError) as e:
        resolve_configs(system, {field.name: other}, read_config(run))
    message = str(e.value)
    assert "\n" not in message and f"'{field.name}' cannot change on --resume" in message
    assert repr(saved) in message and field.metadata["fixed"] in message
    assert getattr(resolve_configs(system, {field.name: saved}, read_config(run))[2], field.name) == saved


def test_a_run_saved_before_a_fixed_setting_existed_takes_the_value_given(tmp_path_factory):
    """An A2C run saved before PopArt existed ran without it (``OLDER_RUN_DEFAULTS``): resumed as is, and the value
    it ran with may be given. R2D2's ``value_rescale_eps`` was there from the start: a run's config without it (hand
    edited) takes what is given, not today's default as "the run's value"."""
    from distrl.api import resolve_configs
    from distrl.runtime.run.run_dir import read_config

    run, _ = saved_run(tmp_path_factory, "a2c")
    path = run / "config.yaml"
    data = yaml.safe_load(path.read_text())
    data["system_config"].pop("value_norm")
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    assert resolve_configs("a2c", {}, read_config(run))[2].value_norm is False
    assert resolve_configs("a2c", {"value_norm": False}, read_config(run))[2].value_norm is False
    with pytest.raises(ConfigError, match="'value_norm' cannot change on --resume: the run has False"):
        resolve_configs("a2c", {"value_norm": True}, read_config(run))
    run, _ = saved_run(tmp_path_factory, "apex-dqn")  # Ape-X DQN's obs_norm came later, off as before
    path = run / "config.yaml"
    data = yaml.safe_load(path.read_text())
    data["system_config"].pop("obs_norm")
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    assert resolve_configs("apex-dqn", {}, read_config(run))[2].obs_norm is False
    with pytest.raises(ConfigError, match="'obs_norm' cannot change on --resume: the run has False"):
        resolve_configs("apex-dqn", {"obs_norm": True}, read_config(run))
    run, _ = saved_run(tmp_path_factory, "r2d2")
    path = run / "config.yaml"
    data = yaml.safe_load(path.read_text())
    data["system_config"].pop("value_rescale_eps")
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    assert resolve_configs("r2d2", {"value_rescale_eps": 0.01}, read_config(run))[2].value_rescale_eps == 0.01


def test_the_budget_is_rounded_up_to_whole_batches_and_said_so():
    """A synchronous batch (PPO's 16 x 1024) rounds 20,000 up to 32,768, exactly on inline; IMPALA's unrolls of
    64 x 8 on local say the actors in flight may add more; a replay system's budget is left as given."""
    from distrl.api import plan_run, rounded_budget

    _, run_cfg, _, _, program = plan_run("ppo", "CartPole-v1", total_steps=20_000)
    assert rounded_budget(program, run_cfg) == (32_768, "budget 20,000 env steps, rounded up to whole batches of "
                                                        "16,384: 32,768")
    _, run_cfg, _, _, program = plan_run("impala", "CartPole-v1", total_steps=1000, runtime="local")
    total, note = rounded_budget(program, run_cfg)
    assert total == 1024 and note.endswith("or a little more (actors in flight)")
    _, run_cfg, _, _, program = plan_run("ppo", "CartPole-v1", total_steps=32_768)
    assert rounded_budget(program, run_cfg) == (32_768, "")
    _, run_cfg, _, _, program = plan_run("apex-dqn", "CartPole-v1", total_steps=1001)
    assert rounded_budget(program, run_cfg) == (1001, "")


def _checkpoint_state(run):
    import json

    path = sorted((run / "checkpoints").glob("step-*"))[-1] / "state.json"
    return path, json.loads(path.read_text())


@pytest.mark.parametrize("bad", [-5, -1, 2.5, "10", None, True, float("nan")])
def test_a_checkpoint_with_bad_counters_is_neither_evaluated_nor_resumed(tmp_path, bad):
    """Generated bad ``env_steps`` in state.json: ``distrl eval`` and ``--resume`` both refuse it in one line, and the
    run dir is left as it was."""
    import json

    from distrl.errors import ConfigError

    run = tmp_path / "r"
    distrl.train("a2c", env="CartPole-v1", total_steps=1000, num_envs=4, run_dir=str(run))
    path, state = _checkpoint_state(run)
    state["counters"]["env_steps"] = bad
    path.write_text(json.dumps(state))
    before = sorted((p.relative_to(run), p.stat().st_mtime_ns) for p in run.rglob("*"))
    with pytest.raises(ConfigError, match="not a count >= 0"):
        distrl.evaluate(run, episodes=1)
    with pytest.raises(ConfigError, match="not a count >= 0"):
        distrl.train("a2c", env="CartPole-v1", total_steps=2000, num_envs=4, run_dir=str(run), resume=True)
    assert sorted((p.relative_to(run), p.stat().st_mtime_ns) for p in run.rglob("*")) == before


@pytest.mark.parametrize("episodes", [[], {"returns": ["1"]}, {"returns": [True]}, {"lengths": [1.5]}, {"count": -1},
                                      {"count": 2.5}, {"summed": -1}, {"total": "9"}, {"total": float("inf")}])
def test_a_checkpoint_with_a_damaged_episode_record_is_neither_evaluated_nor_resumed(tmp_path, episodes):
    import json

    from distrl.errors import ConfigError

    run = tmp_path / "r"
    distrl.train("a2c", env="CartPole-v1", total_steps=1000, num_envs=4, run_dir=str(run))
    path, state = _checkpoint_state(run)
    state["counters"]["episodes"] = {**state["counters"]["episodes"], **episodes} if episodes else episodes
    path.write_text(json.dumps(state))
    before = sorted((p.relative_to(run), p.stat().st_mtime_ns) for p in run.rglob("*"))
    for attempt in (lambda: distrl.evaluate(run, episodes=1),
                    lambda: distrl.train("a2c", env="CartPole-v1", total_steps=2000, num_envs=4, run_dir=str(run),
                                         resume=True)):
        with pytest.raises(ConfigError, match="episodes are not"):
            attempt()
    assert sorted((p.relative_to(run), p.stat().st_mtime_ns) for p in run.rglob("*")) == before


@pytest.mark.parametrize("poison", ["nan", "int8"])
def test_best_weights_that_are_not_finite_float32_are_not_played(tmp_path, poison):
    """A ``best/`` whose weights hold NaN, or are of another dtype, is one line pointing at ``--snapshot last``; the
    last checkpoint still plays. A last checkpoint with NaN weights is refused too."""
    import torch
    from safetensors.torch import load_file, save_file

    from distrl.errors import ConfigError
    from distrl.runtime.run.best_policy import read_best

    run = tmp_path / "r"
    distrl.train("a2c", env="CartPole-v1", total_steps=3000, num_envs=4, run_dir=str(run), eval_interval_steps=1000,
                 eval_episodes=1)
    best = read_best(run)
    file = run / "best" / best["weights"]
    flat = load_file(str(file))["flat"]
    flat = torch.full_like(flat, float("nan")) if poison == "nan" else flat.to(torch.int8)
    save_file({"flat": flat}, str(file))
    with pytest.raises(ConfigError, match="--snapshot last"):
        distrl.evaluate(run, episodes=1)
    assert distrl.evaluate(run, episodes=1, snapshot="last")["snapshot"] == "last"
    model = sorted((run / "checkpoints").glob("step-*"))[-1] / "model.safetensors"
    weights = load_file(str(model))
    save_file({k: torch.full_like(v, float("nan")) if v.is_floating_point() else v for k, v in weights.items()},
              str(model))
    with pytest.raises(ConfigError, match="NaN or inf"):
        distrl.evaluate(run, episodes=1, snapshot="last")


def test_the_python_api_says_its_progress_unless_told_not_to(tmp_path, capsys):
    distrl.train("a2c", env="CartPole-v1", total_steps=2000, num_envs=8, run_dir=str(tmp_path / "a"))
    said = capsys.readouterr()
    assert "[a2c CartPole-v1]" in said.err and "ETA" in said.err and said.out == ""  # on stderr, as tqdm's
    distrl.train("a2c", env="CartPole-v1", total_steps=2000, num_envs=8, run_dir=str(tmp_path / "b"), progress=False)
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("folder", ["best", "checkpoints"])
def test_a_file_where_a_run_keeps_a_folder_is_one_line_on_resume(tmp_path, folder):
    import shutil

    from distrl.errors import ConfigError

    run = tmp_path / "r"
    distrl.train("a2c", env="CartPole-v1", total_steps=1000, num_envs=4, run_dir=str(run), progress=False)
    shutil.rmtree(run / folder, ignore_errors=True)
    (run / folder).write_text("not a folder")
    before = sorted((p.relative_to(run), p.read_bytes() if p.is_file() else b"") for p in run.rglob("*"))
    with pytest.raises(ConfigError, match="is a file, where the run keeps a folder"):
        distrl.train("a2c", env="CartPole-v1", total_steps=2000, run_dir=str(run), resume=True, progress=False,
                     eval_interval_steps=500)
    assert sorted((p.relative_to(run), p.read_bytes() if p.is_file() else b"") for p in run.rglob("*")) == before
