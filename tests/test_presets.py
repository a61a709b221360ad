"""Presets are files (configs/<system>/<name>.yaml): each shipped one plans for its system, says what it is, and is
overridden by --config and --set; a name that is not a preset is one line naming the valid ones."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from distrl.agents.registry import SYSTEMS
from distrl.api import plan_run
from distrl.config import load_yaml
from distrl.errors import ConfigError
from distrl.models.device import resolve_device, resolve_precision
from distrl.presets import CONFIGS, preset_path, presets

SHIPPED = [(p.parent.name, p.stem) for p in sorted(CONFIGS.glob("*/*.yaml"))]


def test_presets_ship_for_the_papers_settings():
    assert {("impala", "atari"), ("impala", "pong-gpu"), ("seed", "vtrace")} <= set(SHIPPED)
    assert {system for system, _ in SHIPPED} <= set(SYSTEMS)  # no folder for a system that does not exist


@pytest.mark.parametrize("system, name", SHIPPED)
def test_each_preset_plans_for_its_system_and_says_what_it_is(system, name):
    import torch

    values = load_yaml(preset_path(system, name))
    env = "ALE/Pong-v5" if name in ("atari", "pong-gpu") else "CartPole-v1"
    if env.startswith("ALE/"):
        pytest.importorskip("ale_py", reason="atari extra not installed")
    runtime = "local" if values.get("num_actors", 1) > 1 else "inline"
    if values.get("device") == "cuda" and not torch.cuda.is_available():  # a GPU preset: on a CPU, one line
        with pytest.raises(ConfigError, match="cuda"):
            plan_run(system, env, runtime=runtime, preset=name)
        values.pop("device")
        _, run_cfg, sys_cfg, _, _ = plan_run(system, env, runtime=runtime, preset=name, device="cpu")
    else:
        _, run_cfg, sys_cfg, _, _ = plan_run(system, env, runtime=runtime, preset=name)
    if values.get("precision") == "auto":  # the run records what auto chose on this machine
        values["precision"] = resolve_precision("auto", resolve_device(run_cfg.device), placeable=True)
    for key, value in values.items():
        assert getattr(sys_cfg, key, getattr(run_cfg, key, None)) == pytest.approx(value), key
    assert len(presets(system)[name]) > 20  # its first comment line


def test_config_file_and_settings_override_the_preset(tmp_path):
    mine = tmp_path / "mine.yaml"
    mine.write_text("num_envs: 32\nlr: 0.001\n")
    cfg = plan_run("seed", "CartPole-v1", runtime="inline", preset="vtrace", config_file=str(mine), lr=0.005)[2]
    assert (cfg.learner, cfg.num_envs, cfg.lr) == ("vtrace", 32, 0.005)


def test_seeds_vtrace_preset_runs_impalas_learner():
    from distrl.agents.impala.learner import ImpalaLearner

    learner = plan_run("seed", "CartPole-v1", runtime="inline", preset="vtrace", num_envs=4)[4].make_learner({})
    assert type(learner) is ImpalaLearner


@settings(max_examples=40, deadline=None)
@given(name=st.text(min_size=1, max_size=30))
def test_a_name_that_is_not_a_preset_is_one_line_naming_the_valid_ones(name):
    """Generated names, paths among them (``../../x``): only a shipped preset's name is read."""
    if name in presets("impala"):
        return
    valid = r"\(valid: atari, pong-gpu; a file of your own: --config"
    with pytest.raises(ConfigError, match=r"impala has no preset .* " + valid):
        plan_run("impala", "CartPole-v1", runtime="inline", preset=name)


def test_cli_preset_and_list(tmp_path):
    from distrl.cli import main

    assert main(["train", "a2c", "--preset", "atari", "--quiet", "--run-dir", str(tmp_path / "r")]) == 2
    assert not (tmp_path / "r").exists()
    assert main(["list", "seed"]) == 0 and main(["list", "nope"]) == 2


def test_distrl_list_is_an_index_and_list_system_shows_its_settings_and_presets(capsys):
    from distrl.cli import main

    main(["list"])
    index = capsys.readouterr().out
    assert all(f"  {name} " in index for name in SYSTEMS) and len(index.splitlines()) == len(SYSTEMS) + 1
    main(["list", "impala"])
    one = capsys.readouterr().out
    assert "vtrace_lambda" in one and "atari" in one and "ppo_clip" not in one
    main(["list", "run"])
    assert "total_steps" in capsys.readouterr().out
