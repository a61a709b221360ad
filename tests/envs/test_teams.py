"""Parameter sharing over a team (``?team=``): each agent of the team a slot of its own game, stepped as the game
itself steps it (checked against the game played alone), an agent gone early seeing zeros until its game ends, the
step after an end starting the game again, bad teams one line each, and one policy learning to play them all."""

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import distrl
from distrl.cli import main
from distrl.envs import make_env, make_vec_env
from distrl.errors import ConfigError
from tests.envs.echo_team import EchoTeam

TEAM = "pettingzoo:tests.envs.echo_team?team=all"


def test_each_agent_of_a_team_is_a_slot_of_its_own_game_as_the_game_itself_plays_it():
    """Six slots, two games of three agents: every slot's observation and reward is what the same game, reset with
    the same seed and given the same moves, gives that agent; an agent gone after round 2 sees zeros (every action
    legal) and earns nothing until its game's end, when every slot of the game ends at once."""
    env = make_vec_env(TEAM, 6, seed=0)
    alone = [EchoTeam(), EchoTeam()]
    obs, _ = env.reset(seed=10)
    seen = [game.reset(seed=10 + g)[0] for g, game in enumerate(alone)]
    rng = np.random.default_rng(0)
    for round_ in range(EchoTeam.ROUNDS):
        for g, game in enumerate(alone):
            for i, agent in enumerate(game.possible_agents):
                want = np.concatenate([seen[g][agent], [1.0, 1.0]]) if agent in seen[g] else [0, 0, 1, 1]
                np.testing.assert_array_equal(obs[3 * g + i], want)
        actions = rng.integers(0, 2, 6)
        live = [list(game.agents) for game in alone]
        obs, rewards, terminated, truncated, _ = env.step(actions)
        for g, game in enumerate(alone):
            seen_now, reward, *_ = game.step({a: int(actions[3 * g + i]) for i, a in enumerate(game.possible_agents)
                                              if a in live[g]})
            np.testing.assert_array_equal(rewards[3 * g:3 * g + 3], [reward.get(a, 0.0) for a in game.possible_agents])
            seen[g] = seen_now if not game.agents else {a: o for a, o in seen_now.items() if a in game.agents}
        last = round_ == EchoTeam.ROUNDS - 1
        assert terminated.tolist() == [last] * 6 and not truncated.any()
        if round_ >= 2:  # p2 left after round 2: no reward however it moves
            assert rewards[2] == rewards[5] == 0.0
    restarted, rewards, terminated, truncated, _ = env.step(np.zeros(6, int))  # the step after the end: a new game
    assert not terminated.any() and not rewards.any() and (restarted[:, 0] == 0).all()


def test_a_game_cut_at_its_limit_ends_truncated_with_its_real_last_observations():
    """At the round limit ``p0`` and ``p1`` are cut short (truncated: a learner bootstraps from their last
    observation, which is the game's own, round 4), while ``p2``, which left by termination after round 2, ends
    terminated."""
    env = make_vec_env("pettingzoo:tests.envs.echo_team_timed?team=all", 3, seed=0)
    obs, _ = env.reset(seed=0)
    for _ in range(EchoTeam.ROUNDS):
        obs, _, terminated, truncated, _ = env.step(obs[:, 1].astype(int))
    assert truncated.tolist() == [True, True, False] and terminated.tolist() == [False, False, True]
    assert obs[0, 0] == obs[1, 0] == EchoTeam.ROUNDS and obs[2].tolist() == [0, 0, 1, 1]


def test_an_evaluation_rounds_up_to_whole_games_and_one_env_alone_is_the_teams_first_agent():
    assert make_vec_env(TEAM, 4, seed=0, training=False).num_envs == 6
    _, info = make_env(TEAM).reset(seed=1)
    assert info["seat"] == 0


@pytest.mark.parametrize("env_id, says", [
    ("pettingzoo:classic.tictactoe_v3?team=all", "has none, one agent moving at a time"),
    ("pettingzoo:tests.envs.echo_team?team=p0,p7", "team= is all or agents of the game, each once"),
    ("pettingzoo:tests.envs.echo_team?team=p0,p0", "team= is all or agents of the game, each once"),
    ("pettingzoo:tests.envs.lopsided?team=all", "observe or act in different spaces"),
    ("pettingzoo:tests.envs.echo_team?team=all&seat=p0", "goes with opponent= only"),
    ("pettingzoo:tests.envs.echo_team?team=all&opening=2", "goes with opponent= only"),
    ("openspiel:kuhn_poker?team=all", "OpenSpiel's games are turn-based"),
])
def test_a_team_the_game_cannot_seat_is_one_line(env_id, says):
    with pytest.raises(ConfigError, match=says) as e:
        make_vec_env(env_id, 6, seed=0)
    assert "\n" not in str(e.value)


def test_num_envs_that_do_not_hold_whole_games_are_one_line_and_exit_2(tmp_path, capsys):
    folder = tmp_path / "run"
    assert main(["train", "ppo", "--env", TEAM, "--set", "num_envs=8", "--run-dir", str(folder)]) == 2
    err = capsys.readouterr().err.strip()
    assert "num_envs is a multiple of 3; got 8" in err and len(err.splitlines()) == 1 and not folder.exists()


@pytest.mark.parametrize("seed", [0, 1])
def test_one_policy_learns_to_play_every_agent_of_its_team(tmp_path, capsys, seed):
    """PPO with the team's three agents in its slots: each must show back the bit it sees. Random play scores 5/3 a
    game (half of 4, 4 and 2 rounds), perfect play 10/3; after 12k env steps every seed of 0-3 played perfectly
    greedily (0.5 s each), the bar is 3."""
    folder = tmp_path / "team"
    assert main(["train", "ppo", "--env", TEAM, "--total-steps", "12000", "--seed", str(seed), "--set", "num_envs=6",
                 "--set", "unroll_length=64", "--run-dir", str(folder), "--quiet", "--json"]) == 0
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["env_steps"] >= 12000
    result = distrl.evaluate(folder, episodes=10)
    assert result["team"] == "all" and result["mean_return"] >= 3.0
    with pytest.raises(ConfigError, match="--video films one env"):
        distrl.evaluate(folder, episodes=1, video=True)


def test_the_games_other_agents_play_the_ids_opponent():
    """``team=p0,p1`` of odd one out, ``p2`` always showing 1 (``?opponent=``): the team showing 0 and 0 makes ``p2``
    the odd one out (-0.5 each), 0 and 1 makes ``p0`` (+1, -0.5), by the game's rules."""
    env = make_vec_env("pettingzoo:tests.envs.odd_one_out?team=p0,p1&opponent=tests.envs.odd_one_out:shows_one", 2,
                       seed=0)
    env.reset(seed=0)
    assert env.step(np.array([0, 0]))[1].tolist() == [-0.5, -0.5]
    assert env.step(np.array([0, 1]))[1].tolist() == [1.0, -0.5]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["p0", "p1", "p2", "p3", "all", " ", ""]), min_size=1, max_size=4))
def test_any_team_is_played_or_one_line(names):
    """Generated ``team=`` lists: a team of distinct agents of the game fills its slots, anything else is refused in
    one line."""
    team = ",".join(names)
    env_id = f"pettingzoo:tests.envs.echo_team?team={team}"
    agents = [n.strip() for n in team.split(",")]
    valid = team == "all" or (set(agents) <= {"p0", "p1", "p2"} and len(set(agents)) == len(agents))
    try:
        env = make_vec_env(env_id, 6 if team == "all" else len(agents) * 2, seed=0)
    except ConfigError as e:
        assert not valid and "\n" not in str(e)
    else:
        assert valid and env.num_envs == (6 if team == "all" else 2 * len(agents))
