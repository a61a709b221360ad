"""Demonstrations in Minari's format: what is written opens with Minari itself and reads back exactly; bad,
mismatched or missing datasets get one line; `distrl record` from a scripted policy and from a trained run."""

import json
import re

import minari
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from distrl.datasets import Episodes, load_episodes, record_episodes, write_episodes
from distrl.datasets.demonstrators import mountain_car
from distrl.datasets.minari_io import check_matches
from distrl.datasets.record import batch_policy
from distrl.envs import env_spec
from distrl.errors import ConfigError


def test_recorded_episodes_round_trip_and_open_with_minari(tmp_path):
    eps = record_episodes("MountainCar-v0", batch_policy(mountain_car), episodes=2, seed=3)
    assert len(eps) == 2 and all(t[-1] for t in eps.terminations)  # the energy pump reaches the flag
    write_episodes(tmp_path / "d", eps, "scripted")
    back = load_episodes(tmp_path / "d")
    assert back.env_id == "MountainCar-v0" and back.meta["algorithm"] == "scripted"
    for a, b in zip(eps.observations + eps.actions + eps.rewards, back.observations + back.actions + back.rewards):
        np.testing.assert_array_equal(a, b)
    ds = minari.MinariDataset(tmp_path / "d" / "data")  # the standard reader, no distrl involved
    assert ds.total_episodes == 2 and ds.total_steps == eps.steps
    assert load_episodes(tmp_path / "d" / "data").steps == eps.steps  # the data folder itself also loads


def test_missing_or_foreign_folders_get_one_line(tmp_path):
    (tmp_path / "x").mkdir()
    for path in (tmp_path / "nothing", tmp_path / "x"):
        with pytest.raises(ConfigError, match="is not a Minari dataset"):
            load_episodes(path)
    (tmp_path / "y" / "data").mkdir(parents=True)
    (tmp_path / "y" / "data" / "metadata.json").write_text("{not json")
    with pytest.raises(ConfigError, match="cannot read the Minari dataset"):
        load_episodes(tmp_path / "y")


def _episodes(obs_shape, action, env_id="MountainCar-v0", obs_value=0.0, obs_dtype=np.float32):
    obs = np.full((4,) + obs_shape, obs_value, obs_dtype)
    return Episodes([obs], [np.full(3, action, np.int64)], [np.zeros(3, np.float32)], [np.zeros(3, bool)],
                    [np.array([False, False, True])], env_id, meta={"path": "p"})


@settings(max_examples=30, deadline=None)
@given(obs_dim=st.integers(1, 4), action=st.integers(-2, 5), env_id=st.sampled_from(["MountainCar-v0", "CartPole-v1"]),
       obs_value=st.sampled_from([0.0, np.nan, np.inf]), obs_dtype=st.sampled_from([np.float32, np.float64]))
def test_a_dataset_that_does_not_fit_the_env_is_refused_in_one_line(obs_dim, action, env_id, obs_value, obs_dtype):
    """MountainCar-v0 takes 2-d float32 observations and actions 0..2: anything else is named, in one line."""
    eps = _episodes((obs_dim,), action, env_id, obs_value, obs_dtype)
    fits = (obs_dim == 2 and 0 <= action <= 2 and env_id == "MountainCar-v0" and np.isfinite(obs_value)
            and obs_dtype == np.float32)
    if fits:
        check_matches(eps, "MountainCar-v0", env_spec("MountainCar-v0"))
        return
    with pytest.raises(ConfigError) as e:
        check_matches(eps, "MountainCar-v0", env_spec("MountainCar-v0"))
    assert "\n" not in str(e.value) and "demos at 'p'" in str(e.value)


def test_record_cli_scripted_and_its_bad_input(tmp_path, cli):
    out = tmp_path / "demos"
    r = cli("record", "--policy", "distrl.datasets.demonstrators:mountain_car", "--env", "MountainCar-v0",
            "--episodes", "2", "--out", str(out))
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    assert summary["episodes"] == 2 and summary["max_return"] > -200
    before = sorted(p.name for p in out.rglob("*"))
    for args in (
        ["--policy", "distrl.datasets.demonstrators:mountain_car", "--env", "MountainCar-v0", "--out", str(out)],
        ["--policy", "no.such:fn", "--env", "MountainCar-v0", "--out", str(tmp_path / "n")],
        ["--policy", "distrl.datasets.demonstrators", "--env", "MountainCar-v0", "--out", str(tmp_path / "n")],
        ["--out", str(tmp_path / "n")],
        ["--policy", "distrl.datasets.demonstrators:mountain_car", "--out", str(tmp_path / "n")],
    ):
        r = cli("record", *args)
        assert r.returncode == 2 and r.stderr.count("\n") == 1 and "Traceback" not in r.stderr, (args, r.stderr)
    assert sorted(p.name for p in out.rglob("*")) == before  # a refused command leaves the dataset as it was
    assert not (tmp_path / "n").exists()


def test_continuous_actions_outside_the_bounds_are_refused():
    rng = np.random.default_rng(0)
    eps = Episodes([rng.normal(size=(4, 3)).astype(np.float32)], [np.full((3, 1), 5.0, np.float32)],
                   [np.zeros(3, np.float32)], [np.zeros(3, bool)], [np.array([False, False, True])], "Pendulum-v1",
                   meta={"path": "p"})
    with pytest.raises(ConfigError, match="outside the action bounds"):
        check_matches(eps, "Pendulum-v1", env_spec("Pendulum-v1"))
    eps.actions[0][:] = 1.5
    check_matches(eps, "Pendulum-v1", env_spec("Pendulum-v1"))


def test_a_dataset_id_in_the_local_minari_root_loads(tmp_path, monkeypatch):
    eps = record_episodes("MountainCar-v0", batch_policy(mountain_car), episodes=1)
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(tmp_path / "root"))
    for dataset_id in ("mc-v0", "team/mc-v0", "team/cars/mc-v0"):  # no namespace, one, nested
        write_episodes(tmp_path / "root" / dataset_id, eps, "scripted")
        monkeypatch.chdir(tmp_path)
        assert load_episodes(dataset_id).steps == eps.steps


def test_noisy_recording_perturbs_box_actions_within_the_bounds():
    from distrl.datasets.record import noisy

    space = env_spec("Pendulum-v1").action_space
    rng = np.random.default_rng(0)
    actions = np.array([noisy(np.array([1.9], np.float32), space, 0.3, rng) for _ in range(2000)])
    assert ((actions >= -2.0) & (actions <= 2.0)).all() and (actions < 1.9).mean() > 0.3
    # away from the bounds, the spread is the noise times the half-range (0.3 x 2)
    free = np.array([noisy(np.zeros(1, np.float32), space, 0.3, rng) for _ in range(4000)])
    assert abs(free.std() - 0.6) < 0.05


def test_noisy_recording_of_discrete_actions_takes_random_ones_at_the_rate():
    from distrl.datasets.record import noisy

    space = env_spec("CartPole-v1").action_space
    rng = np.random.default_rng(0)
    actions = np.array([int(noisy(np.asarray(0), space, 0.5, rng)) for _ in range(4000)])
    assert abs((actions == 1).mean() - 0.25) < 0.03  # half are random, half of those are the other action
    eps = record_episodes("CartPole-v1", lambda obs: 0, episodes=2, noise=1.0)
    assert 0.3 < np.concatenate(eps.actions).mean() < 0.7  # every action random


@settings(max_examples=30, deadline=None)
@given(noise=st.one_of(st.floats(max_value=-1e-9, allow_nan=False), st.just(float("nan")), st.just(float("inf"))))
def test_bad_noise_is_refused_in_one_line_before_anything_is_written(tmp_path_factory, noise):
    import distrl

    out = tmp_path_factory.mktemp("n") / "d"
    with pytest.raises(ConfigError) as e:
        distrl.record(out, policy="distrl.datasets.demonstrators:mountain_car", env="MountainCar-v0", episodes=1,
                      noise=noise)
    assert "--noise" in str(e.value) and "\n" not in str(e.value)
    assert not out.exists()


def test_bad_noise_on_the_command_line_is_one_line(tmp_path, cli):
    r = cli("record", "--policy", "distrl.datasets.demonstrators:mountain_car", "--env", "MountainCar-v0",
            "--noise", "-1", "--out", str(tmp_path / "d"))
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "Traceback" not in r.stderr, r.stderr
    assert not (tmp_path / "d").exists()


def test_discrete_noise_above_one_is_refused():
    with pytest.raises(ConfigError, match="at most 1"):
        record_episodes("CartPole-v1", lambda obs: 0, episodes=1, noise=1.5)


def _run(tmp_path):
    import distrl

    run = tmp_path / "run"
    distrl.train("a2c", env="MountainCar-v0", total_steps=600, num_envs=4, run_dir=str(run))
    return run


def test_record_force_replaces_only_a_dataset_it_could_have_written(tmp_path):
    """``--force`` replaces a dataset folder, never the run it records from (or a folder inside it, or one holding
    it) and never a folder of other files: one line each, before anything is recorded, the folder as it was."""
    import distrl

    run = _run(tmp_path)
    files = sorted(p.relative_to(run) for p in run.rglob("*"))
    for out in (run, run / "demos", tmp_path):
        with pytest.raises(ConfigError, match="overlap the run dir"):
            distrl.record(out, run_dir=run, episodes=1, force=True)
    assert sorted(p.relative_to(run) for p in run.rglob("*")) == files
    other = tmp_path / "notes"
    other.mkdir()
    (other / "keep.txt").write_text("mine")
    with pytest.raises(ConfigError, match="replaces only a dataset folder"):
        distrl.record(other, run_dir=run, episodes=1, force=True)
    assert (other / "keep.txt").read_text() == "mine"
    demos = tmp_path / "demos"
    distrl.record(demos, run_dir=run, episodes=1)
    assert distrl.record(demos, run_dir=run, episodes=2, force=True)["episodes"] == 2  # a dataset: replaced
    afile = tmp_path / "afile"
    afile.write_text("x")
    with pytest.raises(ConfigError, match="which is a file"):
        distrl.record(afile / "sub", run_dir=run, episodes=1)


def test_every_episode_is_checked_not_only_the_first():
    """A later episode of another observation shape, another dtype (float64, never cast) or another action dtype is
    one line naming it."""
    spec = env_spec("MountainCar-v0")
    good = np.zeros((4, 2), np.float32)

    def two(second_obs, second_actions=None):
        second_actions = np.zeros(3, np.int64) if second_actions is None else second_actions
        return Episodes([good, second_obs], [np.zeros(3, np.int64), second_actions], [np.zeros(3, np.float32)] * 2,
                        [np.zeros(3, bool)] * 2, [np.array([False, False, True])] * 2, "MountainCar-v0",
                        meta={"path": "p"})

    with pytest.raises(ConfigError, match=r"shape \(3,\) \(episode 1\)"):
        check_matches(two(np.zeros((4, 3), np.float32)), "MountainCar-v0", spec)
    with pytest.raises(ConfigError, match=r"float64 observations \(episode 1\)"):
        check_matches(two(np.zeros((4, 2), np.float64)), "MountainCar-v0", spec)
    with pytest.raises(ConfigError, match=r"int32 actions \(episode 1\)"):
        check_matches(two(good, np.zeros(3, np.int32)), "MountainCar-v0", spec)
    check_matches(two(good), "MountainCar-v0", spec)


def test_an_episode_whose_arrays_differ_in_length_is_one_line(tmp_path, monkeypatch):
    """Minari hands back what the files hold: an episode with 3 actions and 3 observations (not 4), or 2 rewards,
    is refused when read, before anything trains on it."""
    from types import SimpleNamespace

    folder = write_episodes(tmp_path / "d", record_episodes("MountainCar-v0", batch_policy(mountain_car), 2, 0),
                            "scripted")
    episode = SimpleNamespace(observations=np.zeros((3, 2), np.float32), actions=np.zeros(3, np.int64),
                              rewards=np.zeros(2, np.float32), terminations=np.zeros(3, bool),
                              truncations=np.zeros(3, bool))
    real = minari.MinariDataset.iterate_episodes
    monkeypatch.setattr(minari.MinariDataset, "iterate_episodes",
                        lambda self, *a, **k: [*list(real(self, *a, **k))[:1], episode])
    with pytest.raises(ConfigError, match=r"episode 1 has 3 actions but 3 observations, 2 rewards"):
        load_episodes(folder)


@pytest.mark.parametrize("name, says", [("raises", "the policy raised RuntimeError: boom"),
                                        ("no_argument", "the policy raised TypeError"),
                                        ("strings", "not an action of Discrete(3) (whole numbers)"),
                                        ("fractional", "array(0.7), not an action of Discrete(3)")])
def test_a_scripted_policy_that_fails_or_returns_no_action_is_one_line(tmp_path, name, says):
    """A --policy that raises, takes no observation, returns strings or a fraction for a Discrete space (which a
    cast would have made 0): one line, nothing written."""
    import distrl

    with pytest.raises(ConfigError, match=re.escape(says)):
        distrl.record(tmp_path / "out", policy=f"tests.datasets.scripted_policies:{name}", env="MountainCar-v0",
                      episodes=1)
    assert not (tmp_path / "out").exists()
    distrl.record(tmp_path / "ok", policy="tests.datasets.scripted_policies:zeros", env="MountainCar-v0", episodes=1)


def test_noisy_recording_of_several_categorical_actions_redraws_each_at_the_rate():
    import gymnasium as gym

    from distrl.datasets.record import noisy

    rng = np.random.default_rng(0)
    for space in (gym.spaces.MultiDiscrete([3, 5, 2]), gym.spaces.MultiBinary(3)):
        action = np.zeros(3, np.int64)
        drawn = np.stack([noisy(action, space, 0.5, rng) for _ in range(4000)])
        assert drawn.shape == (4000, 3) and all(space.contains(d.astype(space.dtype)) for d in drawn[:50])
        nvec = np.asarray(getattr(space, "nvec", [2, 2, 2]))
        changed = (drawn != 0).mean(0)  # redrawn with chance 0.5, then different from 0 with chance (n - 1) / n
        np.testing.assert_allclose(changed, 0.5 * (nvec - 1) / nvec, atol=0.03)
