import json

import numpy as np
import pytest
import torch

import distrl
from tests.agents.learning import scores

SMALL = dict(num_actors=2, num_envs=4, unroll_length=8, min_replay=200, batch_size=32, replay_size=2000)


@pytest.mark.parametrize("runtime", ["inline", "local"])
def test_apex_dqn_smoke(tmp_path, runtime):
    s = distrl.train(
        "apex-dqn", env="CartPole-v1", runtime=runtime, total_steps=3000, run_dir=str(tmp_path / "r"), **SMALL
    )
    assert s["env_steps"] >= 3000 and s["learner_updates"] > 0
    with open(tmp_path / "r" / "metrics.csv") as f:
        header = f.readline().strip().split(",")
    for column in (
        "replay_size",
        "insert_rate",
        "sample_rate",
        "sample_insert_ratio",
        "priority_mean",
        "policy_lag_mean",
    ):
        assert column in header


def test_obs_norm_is_learned_from_the_batches_and_reaches_the_policy(tmp_path):
    run = tmp_path / "r"
    s = distrl.train("apex-dqn", env="CartPole-v1", runtime="inline", total_steps=3000, run_dir=str(run),
                     obs_norm=True, **SMALL)
    norm = distrl.load_policy(run).model.obs_norm
    # every replayed transition counted once per sample: batches of 32 times the updates made
    assert norm.count == 32 * s["learner_updates"] > 0
    # CartPole's steps (positions and angles near 0, small spread), not the initial mean 0 and std 1
    assert torch.all(norm.std < 1.0) and torch.all(norm.std > 1e-3)


def test_replay_checkpoint_and_resume_loses_no_data(tmp_path):
    run = tmp_path / "r"
    distrl.train("apex-dqn", env="CartPole-v1", runtime="inline", total_steps=3000, run_dir=str(run), **SMALL)
    ckpt = sorted((run / "checkpoints").glob("step-*"))[-1]
    assert (ckpt / "replay.safetensors").is_file()
    s = distrl.train("apex-dqn", env="CartPole-v1", runtime="inline", total_steps=6000, run_dir=str(run), resume=True)
    assert s["env_steps"] >= 6000
    # the resumed learner started from the saved replay: it holds what was saved plus what came after
    saved = json.loads((ckpt / "replay.json").read_text())["storage"]["inserted"]
    final = sorted((run / "checkpoints").glob("step-*"))[-1]
    assert json.loads((final / "replay.json").read_text())["storage"]["inserted"] >= saved + 2000


def test_every_sent_transition_is_inserted(tmp_path, monkeypatch):
    """Two actor processes feed the replay service concurrently: it holds exactly the transitions they reported."""
    from distrl.runtime.backends.local import LocalBackend

    counts = {"reported": 0, "inserted": 0}
    poll, close = LocalBackend.poll, LocalBackend.close

    def recording_poll(self, timeout):
        reports, restarts = poll(self, timeout)
        counts["reported"] += sum(info["transitions"] for info in reports)
        return reports, restarts

    def recording_close(self):
        counts["inserted"] = self.services()["replay"].replay.storage.inserted
        close(self)

    monkeypatch.setattr(LocalBackend, "poll", recording_poll)
    monkeypatch.setattr(LocalBackend, "close", recording_close)
    s = distrl.train("apex-dqn", env="CartPole-v1", runtime="local", total_steps=5000, run_dir=str(tmp_path / "r"),
                     **dict(SMALL, replay_size=100_000))
    assert s["env_steps"] >= 5000
    assert counts["inserted"] == counts["reported"] > 0


def test_apex_dqn_learns_cartpole(tmp_path):
    """After 150k steps on ``local`` (~7 s) greedy play is past 60 (an untrained Q network: ~10).

    Spread (``benchmarks/learning_spread.py --cases apex-dqn --seeds 0..9 --variants base sse``, 20 runs,
    seed 0 on ``local`` is not reproducible: actor timing changes what the learner sees): 114-498,
    median 158; every run is almost twice the bar (the bar of 100 this test had was within 15% of the
    lowest run). Beside a busy process (``--variants base --load 1``, seeds 0-5): 140-322, median 171."""
    got = scores("apex-dqn", (0,), tmp_path, score="eval", env="CartPole-v1", runtime="local", total_steps=150_000)
    assert got[0] >= 60, got


def test_apex_dqn_on_pong_keeps_each_frame_once(tmp_path):
    """Pixels go into the frame-sharing storage: about one frame per transition instead of eight."""
    pytest.importorskip("ale_py", reason="atari extra not installed")
    import csv

    s = distrl.train("apex-dqn", env="ALE/Pong-v5", runtime="local", total_steps=400, num_actors=1, num_envs=2,
                     unroll_length=8, min_replay=32, batch_size=16, replay_size=1000, run_dir=str(tmp_path / "r"),
                     log_interval_s=0.1)
    assert s["env_steps"] >= 400 and s["learner_updates"] > 0
    rows = [r for r in csv.DictReader(open(tmp_path / "r" / "metrics.csv")) if r.get("replay_bytes_per_item")]
    per_item = float(rows[-1]["replay_bytes_per_item"])
    assert per_item < 2.5 * 84 * 84, per_item  # stored whole it would be 8 frames (56 KB)


def test_the_actors_score_fresh_transitions_in_the_learners_space():
    """With ``value_rescale_eps`` the actor the builder makes ranks a fresh transition by its TD error in h-space,
    as the learner's priority updates will (raw errors would be ~10x larger for rewards of 50)."""
    import numpy as np
    import torch

    from distrl.agents.apex_dqn.actor import dqn_priorities
    from distrl.agents.apex_dqn.builder import _actor
    from distrl.agents.apex_dqn.config import ApexDQNConfig
    from distrl.config import build as build_config
    from distrl.envs import env_spec

    env = env_spec("CartPole-v1")
    rng = np.random.default_rng(0)
    chunk = {"obs": rng.normal(size=(6, 4)).astype(np.float32), "next_obs": rng.normal(size=(6, 4)).astype(np.float32),
             "action": rng.integers(0, 2, 6), "reward": np.full(6, 50.0, np.float32),
             "discount": np.full(6, 0.97, np.float32)}
    for eps in (None, 1e-3):
        actor = _actor("CartPole-v1", env, build_config(ApexDQNConfig, dict(SMALL, value_rescale_eps=eps)), 0, 0,
                       {"weights": None})
        with torch.inference_mode():
            got = actor.priorities(actor.model, chunk, 6)
            np.testing.assert_allclose(got, dqn_priorities(actor.model, chunk, 6, rescale_eps=eps))
            if eps is not None:
                assert got.max() < 0.5 * dqn_priorities(actor.model, chunk, 6).min()
        actor.close()


def test_a_league_players_actor_scores_fresh_transitions_with_the_learners_expectile():
    """``first_head_expectile``: the actor the builder makes for a league player weighs its first head's errors as the
    learner's loss does."""
    import numpy as np
    import torch

    from distrl.agents.apex_dqn.actor import dqn_priorities
    from distrl.agents.apex_dqn.builder import _actor
    from distrl.agents.apex_dqn.config import ApexDQNConfig
    from distrl.config import build as build_config
    from distrl.envs import env_spec

    game = "pettingzoo:classic.tictactoe_v3"
    env = env_spec(game)
    cfg = build_config(ApexDQNConfig, dict(SMALL, fixed_head_slack=0.25, first_head_expectile=0.1))
    actor = _actor(game, env, cfg, 0, 0, {"weights": None})
    rng = np.random.default_rng(0)
    obs = np.stack([env_spec(game).observation_space.sample() for _ in range(6)]).astype(np.float32)
    chunk = {"obs": obs, "next_obs": obs[::-1].copy(), "action": rng.integers(0, 9, 6),
             "reward": rng.choice([-1.0, 0.0, 1.0], 6).astype(np.float32), "discount": np.ones(6, np.float32),
             "versus_fixed": np.arange(6) % 2 == 0}
    with torch.inference_mode():
        got = actor.priorities(actor.model, chunk, 6)
        np.testing.assert_allclose(got, dqn_priorities(actor.model, chunk, 6, expectile=0.1))
        assert not np.allclose(got, dqn_priorities(actor.model, chunk, 6))
    actor.close()


REPLAY_DAMAGES = {
    "replay.json deleted": lambda c: (c / "replay.json").unlink(),
    "replay.safetensors deleted": lambda c: (c / "replay.safetensors").unlink(),
    "size 1e9": lambda c: _edit_replay(c, size=10**9),
    "next -5": lambda c: _edit_replay(c, next=-5),
    "inserted a string": lambda c: _edit_replay(c, inserted="many"),
}


def _edit_replay(ckpt, **counters):
    meta = json.loads((ckpt / "replay.json").read_text())
    meta["storage"].update(counters)
    (ckpt / "replay.json").write_text(json.dumps(meta))


@pytest.fixture(scope="module")
def replay_run(tmp_path_factory):
    run = tmp_path_factory.mktemp("replay") / "r"
    distrl.train("apex-dqn", env="CartPole-v1", runtime="inline", total_steps=2000, run_dir=str(run),
                 keep_checkpoints=1, progress=False, **SMALL)
    return run


@pytest.mark.parametrize("damage", list(REPLAY_DAMAGES))
def test_a_damaged_replay_checkpoint_is_refused_on_resume_and_the_run_dir_left_as_it_was(replay_run, tmp_path, damage):
    """The replay's files gone (its data would be lost without a word) or counters that do not fit its capacity
    (it would sample slots never written): one line on --resume, nothing changed."""
    import shutil

    from distrl.errors import ConfigError

    run = tmp_path / "r"
    shutil.copytree(replay_run, run)
    REPLAY_DAMAGES[damage](sorted((run / "checkpoints").glob("step-*"))[-1])
    before = sorted((p.relative_to(run), p.read_bytes() if p.is_file() else b"") for p in run.rglob("*"))
    with pytest.raises(ConfigError, match="replay"):
        distrl.train("apex-dqn", env="CartPole-v1", runtime="inline", total_steps=4000, run_dir=str(run), resume=True,
                     progress=False)
    assert sorted((p.relative_to(run), p.read_bytes() if p.is_file() else b"") for p in run.rglob("*")) == before


@pytest.mark.parametrize("system", ["apex-dqn", "r2d2"])
def test_stored_actions_outside_the_action_space_are_refused_on_resume(tmp_path, system):
    """A checkpoint's replay whose stored actions CartPole cannot take (2, or -1) would fail the learner mid-run,
    after the run dir changed: it is one line on --resume instead."""
    import shutil

    from safetensors.numpy import load_file, save_file

    from distrl.errors import ConfigError

    env = "CartPole-v1" if system == "apex-dqn" else "distrl/CartPoleNoVelocity-v1"
    settings = SMALL if system == "apex-dqn" else dict(num_actors=2, num_envs=4, unroll_length=10, min_replay=20,
                                                       batch_size=8, replay_size=500, sequence_length=10, overlap=5,
                                                       burn_in=2, n_step=3)
    run = tmp_path / "r"
    distrl.train(system, env=env, runtime="inline", total_steps=2000, run_dir=str(run), progress=False, **settings)
    for bad in (2, -1):
        copy = tmp_path / f"bad{bad}"
        shutil.copytree(run, copy)
        ckpt = sorted((copy / "checkpoints").glob("step-*"))[-1]
        arrays = load_file(str(ckpt / "replay.safetensors"))
        key = next(k for k in arrays if k.endswith("action"))
        arrays[key] = arrays[key].copy()
        arrays[key][0] = bad
        save_file(arrays, str(ckpt / "replay.safetensors"))
        with pytest.raises(ConfigError, match=r"stored action values .* the action space takes 0..1"):
            distrl.train(system, env=env, runtime="inline", total_steps=4000, run_dir=str(copy), resume=True,
                         progress=False)


def test_a_leagues_player_teaches_each_head_its_own_games(tmp_path, monkeypatch):
    """``fixed_head_slack`` in a league with a fixed random player: sampled batches hold transitions of both kinds
    (``versus_fixed``), the main agent's policy has two heads, and exported it plays the run's lexicographic moves and
    says its values are not one Q's."""
    import onnx

    from distrl.agents.apex_dqn.learner import ApexDQNLearner
    from distrl.deploy import run_exported
    from distrl.envs import make_env

    seen = []
    update = ApexDQNLearner.update

    def watched(self, batch):
        seen.append(batch.items["versus_fixed"].copy())
        return update(self, batch)

    monkeypatch.setattr(ApexDQNLearner, "update", watched)
    game = "pettingzoo:classic.tictactoe_v3"
    s = distrl.train_league("apex-dqn", game, fixed="random", fixed_share=0.5, total_steps=4096, slice_steps=2048,
                            snapshot_steps=2048, run_dir=str(tmp_path / "league"), player_runtime="inline",
                            settings={**SMALL, "num_actors": 1, "fixed_head_slack": 0.05})
    flags = np.concatenate(seen)
    assert flags.dtype == bool and flags.any() and not flags.all()  # both kinds of game (0.78 fixed here)
    policy = distrl.load_policy(s["main_run_dir"])
    assert policy.model.num_heads == 2 and policy.model.slack == 0.05
    out = distrl.export(s["main_run_dir"], "onnx", out=tmp_path / "main.onnx")
    env = make_env(game)
    obs = np.stack([env.reset(seed=seed)[0] for seed in range(8)])
    actions, _ = run_exported(out["out"], "onnx", {"obs": obs})
    assert list(actions) == [policy.act(o) for o in obs]
    meta = {p.key: p.value for p in onnx.load(out["out"]).metadata_props}
    assert meta["distrl.q"].startswith("lexicographic acting values (fixed_head_slack=0.05)")


def test_a_leagues_learner_and_actors_weigh_the_first_head_by_its_expectile(tmp_path, monkeypatch):
    """``first_head_expectile`` in a league reaches the learner's loss and the actors' priorities, run end to end."""
    from distrl.agents.apex_dqn import builder, learner

    seen = {"loss": set(), "priorities": set()}
    loss, priorities = learner.two_head_dqn_loss, builder.dqn_priorities

    def watched_loss(model, target, batch, weights, rescale_eps=None, expectile=None):
        seen["loss"].add(expectile)
        return loss(model, target, batch, weights, rescale_eps, expectile)

    def watched_priorities(*args, expectile=None, **kwargs):
        seen["priorities"].add(expectile)
        return priorities(*args, expectile=expectile, **kwargs)

    monkeypatch.setattr(learner, "two_head_dqn_loss", watched_loss)
    monkeypatch.setattr(builder, "dqn_priorities", watched_priorities)
    distrl.train_league("apex-dqn", "pettingzoo:classic.tictactoe_v3", fixed="random", fixed_share=0.5,
                        total_steps=2048, slice_steps=2048, snapshot_steps=2048, run_dir=str(tmp_path / "league"),
                        player_runtime="inline",
                        settings={**SMALL, "num_actors": 1, "fixed_head_slack": 0.25, "first_head_expectile": 0.1})
    assert seen == {"loss": {0.1}, "priorities": {0.1}}


@pytest.mark.parametrize("argv, says", [
    (["--env", "CartPole-v1"], "it is a setting of a league's players (distrl league apex-dqn --fixed random"),
    (["--env", "pettingzoo:classic.tictactoe_v3?opponent=random"], "'pettingzoo:classic.tictactoe_v3?opponent=random' "
                                                                   "is no league's game"),
    (["--env", "pettingzoo:classic.tictactoe_v3?league=x&player=main", "--set", "demos=nowhere"],
     "a demonstration says nothing"),
    (["--env", "pettingzoo:classic.tictactoe_v3", "--set", "fixed_head_slack=-1"], "fixed_head_slack"),
])
def test_a_second_head_where_it_cannot_learn_is_one_line(tmp_path, capsys, argv, says):
    from distrl.cli import main

    run = tmp_path / "r"
    assert main(["train", "apex-dqn", "--set", "fixed_head_slack=0.05", *argv, "--run-dir", str(run)]) == 2
    err = capsys.readouterr().err.strip()
    assert says in err and len(err.splitlines()) == 1 and not run.exists()


@pytest.mark.parametrize("settings, says", [
    (["--set", "first_head_expectile=0.1"], "first_head_expectile is the first of two Q heads' loss: it needs "
                                            "fixed_head_slack"),
    (["--set", "fixed_head_slack=0.3", "--set", "first_head_expectile=0"],
     "setting 'first_head_expectile' must be > 0.0 and <= 0.5"),
    (["--set", "fixed_head_slack=0.3", "--set", "first_head_expectile=0.7"],
     "setting 'first_head_expectile' must be <= 0.5; got 0.7"),
])
def test_an_expectile_without_two_heads_or_out_of_range_is_one_line(tmp_path, capsys, settings, says):
    from distrl.cli import main

    run = tmp_path / "r"
    assert main(["train", "apex-dqn", "--env", "pettingzoo:classic.tictactoe_v3?league=x&player=main", *settings,
                 "--run-dir", str(run)]) == 2
    err = capsys.readouterr().err.strip()
    assert says in err and len(err.splitlines()) == 1 and not run.exists()


def test_the_learners_priorities_are_double_q_td_errors_and_its_target_syncs_every_period():
    """Ape-X DQN's learner (Horgan et al. 2018, eq. 1 with van Hasselt et al.'s double Q): priority |y - Q(x, a)|, y =
    r + gamma^n Q_target(x', argmax_a Q(x', a)) with the online network choosing and the target valuing, both from
    before the update; the target is a copy of the online network after every ``target_update_period`` updates and
    untouched between."""
    import copy

    from distrl.agents.apex_dqn.config import ApexDQNConfig
    from distrl.agents.apex_dqn.learner import ApexDQNLearner
    from distrl.agents.apex_dqn.networks import make_model
    from distrl.config import build as build_config
    from distrl.envs import env_spec
    from distrl.replay import SampledBatch

    cfg = build_config(ApexDQNConfig, dict(hidden=(16, 16), target_update_period=3))
    torch.manual_seed(0)
    learner = ApexDQNLearner(cfg, make_model(env_spec("CartPole-v1"), cfg), replay=None)
    with torch.no_grad():  # each network its own way: a fresh dueling head scores every action alike
        for net in (learner.model, learner.target):
            for p in net.parameters():
                p.add_(0.3 * torch.randn_like(p))
    rng = np.random.default_rng(0)
    n = 16
    items = {"obs": rng.normal(size=(n, 4)).astype(np.float32), "next_obs": rng.normal(size=(n, 4)).astype(np.float32),
             "action": rng.integers(0, 2, n), "reward": rng.normal(size=n).astype(np.float32),
             "discount": np.where(np.arange(n) % 4 == 0, 0.0, 0.99 ** 3).astype(np.float32)}
    batch = SampledBatch(items, np.arange(n), np.full(n, 1 / n), np.ones(n, np.float32))
    online, target = copy.deepcopy(learner.model), copy.deepcopy(learner.target)
    with torch.no_grad():
        x, x_next = torch.as_tensor(items["obs"]), torch.as_tensor(items["next_obs"])
        chosen = online(x_next).argmax(-1)
        assert (chosen != target(x_next).argmax(-1)).any()  # double Q differs from the target's own max here
        bootstrap = target(x_next)[torch.arange(n), chosen]
        y = torch.as_tensor(items["reward"]) + torch.as_tensor(items["discount"]) * bootstrap
        want = (y - online(x)[torch.arange(n), torch.as_tensor(items["action"])]).abs()
    _, priorities = learner.update(batch)
    torch.testing.assert_close(torch.as_tensor(priorities), want, rtol=1e-5, atol=1e-6)
    learner.updates += 1  # (the replay learner's step counts them)
    for _ in range(2):
        assert all(torch.equal(a, b) for a, b in zip(learner.target.parameters(), target.parameters()))
        learner.update(batch)
        learner.updates += 1
    assert all(torch.equal(a, b) for a, b in zip(learner.target.parameters(), learner.model.parameters()))
