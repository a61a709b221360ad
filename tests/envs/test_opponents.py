"""The fixed players the two-player games are evaluated against: tic-tac-toe's minimax is perfect (never loses to
a random player, draws with itself), and ``distrl eval --opponent`` plays them, counting wins, draws and losses."""

import pytest

import distrl
from distrl.cli import main
from distrl.envs import make_env
from distrl.envs.opponents import tictactoe_minimax, uniform_random
from distrl.errors import ConfigError

GAME = "pettingzoo:classic.tictactoe_v3"


def _play(learner, opponent, games=60):
    env = make_env(GAME)
    env.unwrapped.opponent = opponent
    results = []
    for seed in range(games):
        obs, _ = env.reset(seed=seed)
        done, total = False, 0.0
        while not done:
            obs, reward, terminated, truncated, _ = env.step(learner(obs[:-9], obs[-9:]))
            total += reward
            done = terminated or truncated
        results.append(total)
    return results


def test_minimax_never_loses_to_random_and_draws_with_itself():
    against_random = _play(tictactoe_minimax, uniform_random(1))
    assert min(against_random) >= 0 and against_random.count(1.0) > 40
    assert set(_play(tictactoe_minimax, tictactoe_minimax, games=4)) == {0.0}


def test_eval_against_an_opponent_counts_the_results(tmp_path, capsys):
    run = tmp_path / "ttt"
    distrl.train("ppo", env=GAME, runtime="inline", total_steps=2000, run_dir=str(run), progress=False, num_envs=8,
                 unroll_length=128)
    result = distrl.evaluate(run, episodes=20, opponent="minimax")
    assert result["opponent"] == "minimax" and result["losses"] >= 10  # a barely trained player: minimax wins
    assert result["wins"] == 0 and result["wins"] + result["draws"] + result["losses"] == 20
    assert distrl.evaluate(run, episodes=4)["opponent"] == "random"
    assert main(["eval", str(run), "--opponent", "alphazero"]) == 2
    assert "random, minimax or module:function" in capsys.readouterr().err


def test_an_opponent_for_an_env_that_is_not_a_game_is_one_line(tmp_path):
    run = tmp_path / "cartpole"
    distrl.train("apex-dqn", env="CartPole-v1", runtime="inline", total_steps=1000, run_dir=str(run), progress=False)
    with pytest.raises(ConfigError, match="goes with a two-player game"):
        distrl.evaluate(run, opponent="random")
