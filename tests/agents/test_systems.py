"""Every system folder has the same shape and every system module states what the registry promises."""

from pathlib import Path

import pytest

from distrl.agents.registry import SYSTEMS, get_system, system_runtimes
from distrl.core.program import Program
from distrl.core.system import BuildContext
from distrl.envs import env_spec

AGENTS = Path(__file__).resolve().parents[2] / "src" / "distrl" / "agents"


@pytest.mark.parametrize("name", sorted(SYSTEMS))
def test_system_folder_has_the_common_shape(name):
    folder = AGENTS / SYSTEMS[name].rsplit(".", 1)[1]
    files = {p.name for p in folder.iterdir() if p.suffix in (".py", ".md")}
    assert {"__init__.py", "config.py", "networks.py", "builder.py", "README.md"} <= files, files
    readme = (folder / "README.md").read_text()
    assert "```" in readme  # a data-flow sketch
    # a learner of its own, or the README says whose it uses (SEED: IMPALA's; A3C/GORILA: the workers learn)
    assert "learner.py" in files or "learner" in readme.lower()


@pytest.mark.parametrize("name", sorted(SYSTEMS))
def test_system_module_builds_a_program(name, tmp_path):
    module = get_system(name)
    for attr in (
        "Config",
        "DOC",
        "DEFAULT_TOTAL_STEPS",
        "RENAMED_SETTINGS",
        "OLDER_RUN_DEFAULTS",
        "build",
        "make_model",
    ):
        assert hasattr(module, attr), attr
    env = "Pendulum-v1" if name in ("apex-ddpg", "qt-opt") else "CartPole-v1"
    cfg = module.Config()
    if name == "r2d3":  # learns from demonstrations: it needs a dataset
        from dataclasses import replace

        from distrl.datasets import record_episodes, write_episodes

        write_episodes(tmp_path / "demos", record_episodes(env, lambda obs: 0, episodes=1), "constant")
        cfg = replace(cfg, demos=str(tmp_path / "demos"))
    program = module.build(cfg, BuildContext(env, env_spec(env), 10_000, eval_interval_steps=1000))
    assert isinstance(program, Program)
    program.check()
    assert "evaluator" in {r.name for r in program.roles}
    assert module.make_model(env_spec(env), module.Config()) is not None
    assert system_runtimes(name) == program.runtimes  # what distrl list says, without building one


@pytest.mark.parametrize("name", ["ppo", "appo", "impala", "a3c", "seed"])
def test_actor_critic_systems_run_on_multi_discrete_actions_and_dict_observations(name, tmp_path):
    import distrl

    s = distrl.train(name, env="tests.envs.spaces:DistrlLights-v0", runtime="inline", total_steps=2000,
                     run_dir=str(tmp_path / "r"), progress=False, **({} if name in ("ppo", "a3c") else
                                                                    {"num_envs": 8, "unroll_length": 16}))
    assert s["env_steps"] >= 2000
    assert distrl.load_policy(tmp_path / "r").act(distrl.load_policy(tmp_path / "r").spec.observation_space.sample()
                                                  ).shape == (3,)


@pytest.mark.parametrize("name", ["apex-dqn", "gorila", "r2d2", "apex-ddpg", "qt-opt", "es"])
def test_systems_without_several_categorical_actions_refuse_them_in_one_line(name):
    from distrl.api import plan_run
    from distrl.errors import ConfigError

    with pytest.raises(ConfigError, match="MultiDiscrete") as e:
        plan_run(name, "tests.envs.spaces:DistrlLights-v0", runtime="inline")
    assert "\n" not in str(e.value)


# r2d3 plans only with a demo dataset (tests/agents/test_r2d3.py); its ACTIONS are R2D2's
@pytest.mark.parametrize("name", sorted(set(SYSTEMS) - {"r2d3"}))
def test_each_system_says_which_action_spaces_it_takes_and_takes_them(name):
    """``ACTIONS`` (shown by ``distrl list``) is what the system plans with: a space it names plans, one it does
    not is refused."""
    from distrl.api import plan_run
    from distrl.errors import ConfigError

    envs = {"Discrete": "CartPole-v1", "MultiDiscrete": "tests.envs.spaces:DistrlLights-v0",
            "MultiBinary": "tests.envs.spaces:DistrlLightsBinary-v0", "Box": "Pendulum-v1"}
    takes = get_system(name).ACTIONS
    for space, env in envs.items():
        if space in takes:
            plan_run(name, env, runtime="inline")
        else:
            with pytest.raises(ConfigError):
                plan_run(name, env, runtime="inline")
