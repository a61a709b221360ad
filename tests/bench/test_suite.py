"""The suites' cells: every system on its env, the runtimes it declares, the seeds asked for."""

import pytest

from distrl.agents.registry import SYSTEMS, get_system
from distrl.bench.suite import BEYOND_ENVS, BEYOND_STEPS, SYSTEM_ENVS, THRESHOLDS, cells


def test_quick_is_every_system_once_on_its_default_runtime_plus_pong():
    quick = cells("quick")
    learning = [c for c in quick if c.threshold is not None]
    assert sorted(c.system for c in learning) == sorted(SYSTEMS)  # no system left out
    assert {c.seed for c in quick} == {0}
    assert all(c.runtime == ("inline" if c.system in ("a2c", "ppo") else "local") for c in learning)
    assert all(c.max_wall_s == 180.0 and c.total_steps is None for c in learning)  # the system's own budget
    pong = [c for c in quick if c.threshold is None]
    assert [(c.system, c.env) for c in pong] == [("impala", "ALE/Pong-v5")]
    assert next(c for c in learning if c.system == "r2d3").needs == "demos"


def test_full_is_every_runtime_three_seeds_no_cap():
    full = cells("full", pong=False)
    assert all(c.max_wall_s is None for c in full)
    a2c = {(c.runtime, c.seed) for c in full if c.system == "a2c"}
    assert a2c == {("inline", s) for s in (0, 1, 2)}  # synchronous by design
    impala = {(c.runtime, c.seed) for c in full if c.system == "impala"}
    assert impala == {(r, s) for r in ("inline", "local", "ray") for s in (0, 1, 2)}
    assert len({c.key for c in full}) == len(full)  # one folder per cell
    assert all("/" not in c.key for c in full)


def test_narrowing():
    got = cells("full", systems=["impala", "es"], runtimes=["ray"], seeds=[4], max_wall_s=5.0)
    assert {(c.system, c.runtime, c.seed) for c in got if c.threshold is not None} == {
        ("impala", "ray", 4),
        ("es", "ray", 4),
    }
    pong = [c for c in got if c.threshold is None]
    assert pong and pong[0].runtime == "ray" and pong[0].max_wall_s == 5.0
    assert cells("quick", systems=["a3c"], runtimes=["ray"])[0].runtime == "ray"
    assert [c.env for c in cells("quick", systems=["qt-opt"])] == ["Pendulum-v1"]
    with pytest.raises(ValueError):
        cells("huge")


def test_every_env_has_a_threshold():
    assert {env for _, env in SYSTEM_ENVS + BEYOND_ENVS} <= set(THRESHOLDS)


def test_beyond_is_the_defaults_suite_without_pong():
    """Read without box2d: a system's runtimes come from its home env, so listing the cells needs no Box2D."""
    beyond = cells("beyond")
    assert [(c.system, c.env) for c in beyond] == BEYOND_ENVS  # one seed each, no Pong cell
    assert {c.seed for c in beyond} == {0} and all(c.max_wall_s == 300.0 for c in beyond)
    assert {c.runtime for c in beyond if c.system == "a2c"} == {"inline"}
    assert {c.threshold for c in beyond if c.env.startswith("LunarLander")} == {200.0}
    assert len(cells("beyond", systems=["impala"], seeds=[0, 1, 2])) == 3 * 3  # three envs, three seeds
    budgets = {(c.system, c.env): c.total_steps for c in beyond}
    assert all(budgets[key] == steps for key, steps in BEYOND_STEPS.items())  # a longer budget where one is set
    assert all(steps != get_system(system).DEFAULT_TOTAL_STEPS for (system, _), steps in BEYOND_STEPS.items())
    assert all(c.total_steps is None for c in cells("quick", pong=False))
