"""Nothing gets in, nothing is lost: bad settings of every system are one line and touch nothing (generated);
damaged run dirs are one-line errors; a failed command leaves the run dir as it was; non-finite data never
trains the model."""

import dataclasses
import json
import os
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import distrl
from distrl import cli
from distrl.agents.registry import SYSTEMS, get_system
from distrl.config import field_types
from distrl.run_config import RunConfig

BAD_NUMBERS = st.sampled_from(["nan", "inf", "-inf", "1e400", "-1", "0", "-5", "1e12", str(2**70), "ten", "", "1,2",
                               "[1]", "true"])


def _settings():
    out = [("run", name, tp) for name, (tp, _) in field_types(RunConfig).items()]
    for system in SYSTEMS:
        out += [(system, name, tp) for name, (tp, _) in field_types(get_system(system).Config).items()]
    return out


SETTINGS = [(where, name, tp) for where, name, tp in _settings() if tp in (int, float, tuple)]


def _choice_settings():
    """(system or "run", name, its choices) of every setting that takes one of a few strings."""
    out = [("run", f.name, f.metadata["choices"]) for f in dataclasses.fields(RunConfig) if f.metadata.get("choices")]
    for system in SYSTEMS:
        out += [(system, f.name, f.metadata["choices"]) for f in dataclasses.fields(get_system(system).Config)
                if f.metadata.get("choices")]
    return out


CHOICES = _choice_settings()


def _cartpole_demos(root: Path) -> Path:
    """One recorded CartPole-v1 episode, made once per session."""
    from distrl.datasets import record_episodes, write_episodes

    out = root / "cartpole-demos"
    if not out.exists():
        write_episodes(out, record_episodes("CartPole-v1", lambda obs: 0, episodes=1), "constant")
    return out


def _run_cli(args, tmp_path, capsys) -> tuple[int, list[str]]:
    import os

    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        code = cli.main(args)
    finally:
        os.chdir(cwd)
    err = capsys.readouterr().err
    return code, err.strip().splitlines()


@settings(max_examples=int(os.environ.get("DISTRL_HYPOTHESIS_EXAMPLES", 150)), deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(choice=st.sampled_from(SETTINGS), value=BAD_NUMBERS)
def test_bad_values_of_every_setting_are_one_line_and_touch_nothing(tmp_path_factory, capsys, choice, value):
    where, name, tp = choice
    tmp_path = tmp_path_factory.mktemp("bad")
    system = "impala" if where == "run" else where
    # the default CartPole has discrete actions
    env = ["--env", "Pendulum-v1"] if system in ("apex-ddpg", "qt-opt") else []
    if system == "r2d3":  # it needs demonstrations: the only thing wrong must be the value under test
        env = ["--set", f"demos={_cartpole_demos(tmp_path_factory.getbasetemp())}"]
    # inline: a value that happens to be valid trains in this process for a moment instead of starting
    # processes; --total-steps would override a total_steps under test, so that one is bounded by time instead
    budget = ["--set", "max_wall_s=2"] if name == "total_steps" else ["--total-steps", "100"]
    code, lines = _run_cli(["train", system, *env, "--runtime", "inline", "--set", f"{name}={value}", *budget],
                           tmp_path, capsys)
    if code == 0:  # a value that happens to be valid for this setting (e.g. 0 entropy): it ran; nothing to check
        return
    assert code == 2 and len(lines) == 1 and lines[0].startswith("distrl: error:"), lines
    assert name in lines[0] or "runtime" in lines[0] or "env" in lines[0], lines
    assert list(tmp_path.iterdir()) == []  # nothing written


@settings(max_examples=int(os.environ.get("DISTRL_HYPOTHESIS_EXAMPLES", 150)) // 3, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(choice=st.sampled_from(CHOICES), value=st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=12))
def test_a_value_outside_a_settings_choices_is_one_line_naming_them(tmp_path_factory, capsys, choice, value):
    """Every string setting with choices (e.g. R2D2's ``initial_priority``), any other text: one line, exit 2,
    naming the setting and what is valid; nothing trains."""
    where, name, choices = choice
    if value.strip() in choices or not value.strip():  # valid, or empty: the setting's default
        return
    tmp_path = tmp_path_factory.mktemp("choice")
    system = "impala" if where == "run" else where
    env = ["--env", "Pendulum-v1"] if system in ("apex-ddpg", "qt-opt") else []
    if system == "r2d3":  # it needs demonstrations: the only thing wrong must be the value under test
        env = ["--set", f"demos={_cartpole_demos(tmp_path_factory.getbasetemp())}"]
    runtime = [] if name == "runtime" else ["--runtime", "inline"]  # a flag and --set of one setting: another error
    code, lines = _run_cli(["train", system, *env, *runtime, "--set", f"{name}={value}", "--total-steps", "100"],
                           tmp_path, capsys)
    assert code == 2 and len(lines) == 1 and lines[0].startswith("distrl: error:"), lines
    assert f"setting '{name}'" in lines[0] and all(c in lines[0] for c in choices), lines
    assert list(tmp_path.iterdir()) == []  # nothing written


@pytest.mark.parametrize("env,fragment", [
    ("tests.envs.spaces:DistrlTextObservations-v0", "cannot flatten"),
    ("tests.envs.spaces:DistrlTupleActions-v0", "action space"),
    ("tests.envs.spaces:DistrlActionsFromOne-v0", "whose actions start at 1"),
    ("tests.envs.no_such_module:X-v0", "importing module"),
])
def test_unsupported_envs_are_one_line(tmp_path, capsys, env, fragment):
    """Discrete, Dict and Tuple observations are flattened (FrozenLake, Blackjack train); a Text observation, which
    Gymnasium cannot flatten into numbers, and a Tuple action are what is left to refuse."""
    code, lines = _run_cli(["train", "impala", "--env", env, "--total-steps", "100"], tmp_path, capsys)
    assert code == 2 and len(lines) == 1 and fragment in lines[0], lines


def test_unusable_config_files_and_run_dirs_are_one_line(tmp_path, capsys):
    (tmp_path / "binary.yaml").write_bytes(bytes(range(256)))
    code, lines = _run_cli(["train", "a2c", "--config", "binary.yaml"], tmp_path, capsys)
    assert code == 2 and len(lines) == 1, lines
    (tmp_path / "afile").write_text("x")
    code, lines = _run_cli(["train", "a2c", "--run-dir", "afile/run", "--total-steps", "100"], tmp_path, capsys)
    assert code == 2 and len(lines) == 1 and "cannot be created" in lines[0], lines


def test_force_deletes_only_run_dirs(tmp_path, capsys):
    (tmp_path / "project").mkdir()
    (tmp_path / "project" / "notes.txt").write_text("precious")
    code, lines = _run_cli(
        ["train", "a2c", "--run-dir", "project", "--force", "--total-steps", "100"], tmp_path, capsys
    )
    assert code == 2 and "not one" in lines[0]
    assert (tmp_path / "project" / "notes.txt").read_text() == "precious"


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> Path:
    run = tmp_path_factory.mktemp("good") / "run"
    distrl.train("a2c", env="CartPole-v1", runtime="inline", total_steps=4000, num_envs=8, run_dir=str(run))
    return run


def _damage(run: Path, how: str) -> None:
    ckpt = sorted((run / "checkpoints").glob("step-*"))[-1]
    if how == "truncated weights":
        data = (ckpt / "model.safetensors").read_bytes()
        (ckpt / "model.safetensors").write_bytes(data[: len(data) // 2])
    elif how == "empty weights":
        (ckpt / "model.safetensors").write_bytes(b"")
    elif how == "bad state json":
        (ckpt / "state.json").write_text("{not json")
    elif how == "state json a list":
        (ckpt / "state.json").write_text("[]")
    elif how == "negative counters":
        meta = json.loads((ckpt / "state.json").read_text())
        meta["counters"]["env_steps"] = -1_000_000
        (ckpt / "state.json").write_text(json.dumps(meta))
    elif how == "foreign system":
        meta = json.loads((ckpt / "state.json").read_text())
        meta["counters"]["system"] = "impala"
        (ckpt / "state.json").write_text(json.dumps(meta))
    elif how == "empty yaml":
        (run / "config.yaml").write_text("")
    elif how == "list yaml":
        (run / "config.yaml").write_text("- a\n- b\n")
    elif how == "no run section":
        (run / "config.yaml").write_text("system: a2c\nsystem_config: {}\n")
    elif how == "bad yaml":
        (run / "config.yaml").write_text("system: [unclosed\n")
    elif how == "bad saved value":
        text = (run / "config.yaml").read_text()
        assert re.search(r"gamma: [0-9.]+\n", text)
        (run / "config.yaml").write_text(re.sub(r"gamma: [0-9.]+\n", "gamma: .nan\n", text))
    elif how == "no checkpoints":
        shutil.rmtree(run / "checkpoints")


DAMAGE = [
    "truncated weights",
    "empty weights",
    "bad state json",
    "state json a list",
    "negative counters",
    "foreign system",
    "empty yaml",
    "list yaml",
    "no run section",
    "bad yaml",
    "bad saved value",
    "no checkpoints",
]


@pytest.mark.parametrize("how", DAMAGE)
def test_a_damaged_run_dir_is_one_line_and_stays_as_it_was(trained, tmp_path, capsys, how):
    run = tmp_path / "run"
    shutil.copytree(trained, run)
    _damage(run, how)
    before = {p: p.read_bytes() for p in run.rglob("*") if p.is_file()}
    for args in (["train", "a2c", "--run-dir", str(run), "--resume", "--total-steps", "8000", "--quiet"],
                 ["eval", str(run), "--episodes", "1"]):
        code, lines = _run_cli(args, tmp_path, capsys)
        if how in ("negative counters", "foreign system") and args[0] == "eval":
            continue  # eval reads only the weights: these damage what a resume trusts
        if how == "truncated weights" and args[0] == "train":
            # the damaged newest checkpoint is passed over for an older whole one, if there is one
            if code == 0:
                continue
        assert code == 2 and len(lines) == 1 and lines[0].startswith("distrl: error:"), (how, args[0], lines)
        if how == "bad saved value":
            assert "finite" in lines[0], lines
        after = {p: p.read_bytes() for p in run.rglob("*") if p.is_file()}
        assert after == before, (how, args[0])  # nothing written, nothing removed


def test_an_incomplete_newer_checkpoint_is_passed_over(trained, tmp_path, capsys):
    run = tmp_path / "run"
    shutil.copytree(trained, run)
    (run / "checkpoints" / "step-999999999999").mkdir()  # a crash while writing left it empty
    code, lines = _run_cli(["train", "a2c", "--run-dir", str(run), "--resume", "--total-steps", "8000", "--quiet"],
                           tmp_path, capsys)
    assert code == 0 and any("step-999999999999 cannot be used (no state.json); resuming" in line
                             for line in lines), lines


def test_a_newer_checkpoint_with_a_file_cut_short_is_passed_over_saying_why(trained, tmp_path, capsys):
    """A crash or a full disk while writing: the newest checkpoint's weights end early. The resume takes the older
    whole one and says which file was damaged (it failed with "does not fit this run" before)."""
    run = tmp_path / "run"
    shutil.copytree(trained, run)
    whole = sorted((run / "checkpoints").glob("step-*"))[-1]
    newer = run / "checkpoints" / "step-999999999999"
    shutil.copytree(whole, newer)
    data = (newer / "model.safetensors").read_bytes()
    (newer / "model.safetensors").write_bytes(data[: len(data) - 100])
    code, lines = _run_cli(["train", "a2c", "--run-dir", str(run), "--resume", "--total-steps", "8000", "--quiet"],
                           tmp_path, capsys)
    said = [line for line in lines if "cannot be used" in line]
    assert code == 0 and len(said) == 1 and "model.safetensors is damaged" in said[0], lines
    assert f"resuming {run} from {whole.name}" in said[0], said


def test_a_resume_with_another_env_names_the_env(trained, tmp_path, capsys):
    run = tmp_path / "run"
    shutil.copytree(trained, run)
    code, lines = _run_cli(["train", "a2c", "--env", "Acrobot-v1", "--run-dir", str(run), "--resume", "--total-steps",
                            "8000", "--quiet"], tmp_path, capsys)
    assert code == 2 and len(lines) == 1, lines
    assert "env 'CartPole-v1', not 'Acrobot-v1'" in lines[0] and "--run-dir" in lines[0], lines


def test_non_finite_data_never_trains_the_model_and_stops_the_run(tmp_path, monkeypatch, capsys):
    """NaN rewards from a broken env: every update is skipped and counted, the weights stay finite, and after
    NONFINITE_LIMIT of them in a row the run stops with one line and exit code 1."""
    import torch

    monkeypatch.setenv("DISTRL_POISON_AFTER", "300")
    code, lines = _run_cli(["train", "a2c", "--env", "tests.envs.poisoned:DistrlPoisoned-v0", "--run-dir", "r",
                            "--total-steps", "200000", "--set", "num_envs=4", "--quiet"], tmp_path, capsys)
    assert code == 1 and len(lines) == 1 and "not finite in 25 updates in a row" in lines[0], lines
    from safetensors.torch import load_file

    for ckpt in (tmp_path / "r" / "checkpoints").glob("step-*"):
        assert all(torch.isfinite(t).all() for t in load_file(str(ckpt / "model.safetensors")).values())


@pytest.mark.parametrize("sets,fragment", [
    (["tls_cert=cert.pem"], "go together"),
    (["tls_cert=missing.pem", "tls_key=key.pem"], "cannot read tls_cert"),
    (["tls_cert=plain.txt", "tls_key=key.pem"], "not a PEM file"),
])
def test_unusable_tls_files_are_one_line_and_touch_nothing(tmp_path, capsys, sets, fragment):
    (tmp_path / "cert.pem").write_text("-----BEGIN CERTIFICATE-----\n")
    (tmp_path / "key.pem").write_text("-----BEGIN PRIVATE KEY-----\n")
    (tmp_path / "plain.txt").write_text("not a certificate")
    before = sorted(p.name for p in tmp_path.iterdir())
    args = ["train", "seed", "--total-steps", "100"] + [a for s in sets for a in ("--set", s)]
    code, lines = _run_cli(args, tmp_path, capsys)
    assert code == 2 and len(lines) == 1 and fragment in lines[0], lines
    assert sorted(p.name for p in tmp_path.iterdir()) == before


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory) -> Path:
    """A run whose periodic evaluation kept a best policy (run_dir/best)."""
    run = tmp_path_factory.mktemp("evaluated") / "run"
    distrl.train("a2c", env="CartPole-v1", runtime="inline", total_steps=3000, num_envs=8, unroll_length=8,
                 eval_interval_steps=1000, eval_episodes=1, run_dir=str(run))
    assert (run / "best" / "best.json").is_file()
    return run


@pytest.mark.parametrize("how", ["truncated", "another model's", "empty", "bad json", "removed"])
def test_a_damaged_best_policy_is_one_line_or_passed_over_for_the_last_checkpoint(evaluated, tmp_path, capsys, how):
    """Weights that are there but do not load: one line naming ``--snapshot last``. A record that is not whole (an
    empty file, unreadable JSON, no folder): no best was kept, so eval plays the last checkpoint, and asking for the
    best is one line. Nothing is written either way."""
    from safetensors.numpy import save_file

    run = tmp_path / "run"
    shutil.copytree(evaluated, run)
    best = run / "best"
    weights = best / json.loads((best / "best.json").read_text())["weights"]
    if how == "truncated":
        data = weights.read_bytes()
        weights.write_bytes(data[: len(data) // 2])
    elif how == "another model's":
        save_file({"flat": np.zeros(5, np.float32)}, str(weights))
    elif how == "empty":
        weights.write_bytes(b"")
    elif how == "bad json":
        (best / "best.json").write_text("{not json")
    else:
        shutil.rmtree(best)
    before = {p: p.read_bytes() for p in run.rglob("*") if p.is_file()}
    code, lines = _run_cli(["eval", str(run), "--episodes", "1"], tmp_path, capsys)
    if how in ("truncated", "another model's"):
        assert code == 2 and len(lines) == 1 and "--snapshot last" in lines[0], lines
        assert _run_cli(["eval", str(run), "--episodes", "1", "--snapshot", "last"], tmp_path, capsys)[0] == 0
    else:
        assert code == 0, lines
        code, lines = _run_cli(["eval", str(run), "--episodes", "1", "--snapshot", "best"], tmp_path, capsys)
        assert code == 2 and len(lines) == 1 and "no readable best policy" in lines[0], lines
    assert {p: p.read_bytes() for p in run.rglob("*") if p.is_file()} == before


@settings(max_examples=30, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(max_size=12).filter(lambda t: t not in ("best", "last") and not t.startswith("-")))
def test_a_snapshot_other_than_best_or_last_is_one_line_naming_both(evaluated, tmp_path, capsys, text):
    for args in (["eval", str(evaluated), "--episodes", "1", "--snapshot", text],
                 ["record", str(evaluated), "--out", "demos", "--snapshot", text]):
        code, lines = _run_cli(args, tmp_path, capsys)
        assert code == 2 and len(lines) == 1 and "'best'" in lines[0] and "'last'" in lines[0], (args, lines)
    with pytest.raises(distrl.errors.ConfigError, match="best, last"):
        distrl.load_policy(evaluated, text)
    assert not (tmp_path / "demos").exists()
