import dataclasses
from dataclasses import dataclass

import pytest
from hypothesis import given
from hypothesis import strategies as st

from distrl.config import build, describe, load_yaml, parse_assignments, setting
from distrl.errors import ConfigError


@dataclass(frozen=True)
class Example:
    lr: float = setting(1e-3, "learning rate", low=0.0, low_open=True)
    envs: int = setting(4, "envs", low=1)
    mode: str = setting("a", "mode", choices=("a", "b"))
    flag: bool = setting(False, "flag")
    hidden: tuple = setting((64, 64), "sizes")
    limit: float | None = setting(None, "optional", low=0.0)


def test_build_coerces_strings():
    cfg = build(Example, {"lr": "0.5", "envs": "8", "flag": "true", "hidden": "32,16", "limit": "3"})
    assert cfg == Example(lr=0.5, envs=8, flag=True, hidden=(32, 16), limit=3.0)


@pytest.mark.parametrize("text", ["32,16", "(32,16)", "[32, 16]", " [32,16,] "])
def test_a_list_of_integers_is_read_with_or_without_brackets(text):
    assert build(Example, {"hidden": text}).hidden == (32, 16)


@given(sizes=st.lists(st.integers(1, 4096), min_size=1, max_size=5), wrap=st.sampled_from(["", "()", "[]"]),
       stray=st.sampled_from("()[]"), at=st.integers(0, 40))
def test_a_bracket_other_than_one_enclosing_pair_is_refused(sizes, wrap, stray, at):
    body = ",".join(map(str, sizes))
    text = wrap[:1] + body + wrap[1:]
    assert build(Example, {"hidden": text}).hidden == tuple(sizes)
    inner = min(at, len(body))  # a stray bracket inside the list, or a second pair around it
    for bad in (wrap[:1] + body[:inner] + stray + body[inner:] + wrap[1:], "[" + text + ")"):
        with pytest.raises(ConfigError, match=r"comma-separated list of integers \(brackets optional\), got '") as e:
            build(Example, {"hidden": bad})
        assert "\n" not in str(e.value) and repr(bad)[:20] in str(e.value)


@pytest.mark.parametrize("overrides,message", [
    ({"lr": "-1"}, "'lr' must be > 0.0"),
    ({"lr": "0"}, "'lr' must be > 0.0"),
    ({"envs": "0"}, "'envs' must be >= 1"),
    ({"envs": "1.5"}, "'envs' must be of type int"),
    ({"mode": "c"}, "'mode' must be one of a, b"),
    ({"flag": "maybe"}, "'flag' must be of type bool"),
    ({"lrr": "1"}, "did you mean 'lr'"),
])
def test_bad_values_name_setting_and_valid_range(overrides, message):
    with pytest.raises(ConfigError, match=message):
        build(Example, overrides)


def test_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        Example().lr = 2.0


def test_assignments_and_yaml(tmp_path):
    assert parse_assignments(["a=1", "num-envs = 3"]) == {"a": "1", "num_envs": "3"}
    with pytest.raises(ConfigError, match="key=value"):
        parse_assignments(["oops"])
    f = tmp_path / "c.yaml"
    f.write_text("run:\n  seed: 3\nsystem:\n  lr: 0.1\nenvs: 2\n")
    assert load_yaml(f) == {"seed": 3, "lr": 0.1, "envs": 2}
    f.write_text("- a\n- b\n")
    with pytest.raises(ConfigError, match="mapping"):
        load_yaml(f)
    with pytest.raises(ConfigError, match="does not exist"):
        load_yaml(tmp_path / "missing.yaml")
    with pytest.raises(ConfigError, match=r"does not exist \(a preset .*--preset atari"):  # a preset's path elsewhere
        load_yaml(tmp_path / "configs" / "impala" / "atari.yaml")
    f.write_text("lr: [1, 2\nenvs: 3\n")
    with pytest.raises(ConfigError, match=r"not valid YAML at line 2, column \d+: expected ','"):  # where it broke
        load_yaml(f)


@pytest.mark.parametrize("value", ["nan", "inf", float("nan"), "-inf"])
def test_a_value_that_is_not_a_finite_number_is_told_the_range(value):
    with pytest.raises(ConfigError, match=r"setting 'lr' must be a finite number > 0.0; got"):
        build(Example, {"lr": value})


def test_describe_lists_every_field_with_doc():
    rows = describe(Example)
    assert [r[0] for r in rows] == ["lr", "envs", "mode", "flag", "hidden", "limit"]
    assert all(r[3] for r in rows)


def test_no_system_setting_shares_a_name_with_a_run_setting():
    """``--set NAME=VALUE`` reaches the run's settings or the system's by name: a name in both would make one of
    them unreachable (R2D2's sequence ``overlap`` once met a run setting of that name)."""
    import dataclasses

    from distrl.agents.registry import SYSTEMS, get_system
    from distrl.run_config import RunConfig

    run = {f.name for f in dataclasses.fields(RunConfig)}
    for name in SYSTEMS:
        system = {f.name for f in dataclasses.fields(get_system(name).Config)}
        assert not run & system, f"{name}: {sorted(run & system)}"


@pytest.mark.parametrize("text", ["lr: 0.1\nnum_envs: 8\nlr: 0.2\n", "run:\n  seed: 1\nsystem:\n  seed: 2\n",
                                  "seed: 1\nrun:\n  seed: 2\n", "system:\n  lr: 1\n  lr: 2\n"])
def test_a_setting_given_twice_in_a_config_file_is_one_line(tmp_path, text):
    """PyYAML keeps the last of two equal keys silently; a config file that gives a setting twice is refused."""
    f = tmp_path / "twice.yaml"
    f.write_text(text)
    with pytest.raises(ConfigError, match="twice"):
        load_yaml(f)


@pytest.mark.parametrize("argv", [["eval", "RUN", "--seed", "-1"], ["eval", "RUN", "--episodes", "0"],
                                  ["record", "OUT", "--seed", "-1"], ["join", "127.0.0.1:9", "--timeout", "nan"],
                                  ["join", "127.0.0.1:9", "--timeout", "-1"], ["bench", "--ceiling-s", "inf"],
                                  ["bench", "--max-wall-s", "0"], ["pbt", "a2c", "--seed", "-3"]])
def test_numbers_that_would_hang_or_fail_later_are_one_line_at_the_command_line(argv, capsys):
    from distrl.cli import main

    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and ("whole number" in err or "seconds" in err), err
