"""OpenSpiel's games as distrl envs: the turn passes as the game says, chance is drawn from the episode's seed apart
from the opponent's own draws, the rewards are the game's returns (random play against random play in Kuhn poker
scores the game's exact value, +-1/8, and in three-player Kuhn each seat's), and games that are not turn-based, or
parameters the game refuses, are one line."""

import numpy as np
import pytest

pytest.importorskip("pyspiel", reason="games extra not installed")

from distrl.envs import env_spec, make_env  # noqa: E402
from distrl.errors import ConfigError  # noqa: E402

KUHN = "openspiel:kuhn_poker"


def test_kuhn_is_an_information_state_and_a_mask():
    spec = env_spec(KUHN)
    assert spec.obs_shape == (11 + 2,) and spec.action_mask_size == 2  # Kuhn's information state tensor, the mask


def test_random_play_scores_the_games_value_in_each_seat():
    """OpenSpiel's expected_game_score for two uniform players: +0.125 for the first player, -0.125 for the second."""
    from tests.envs.games import random_play

    returns = {0: [], 1: []}
    for seat, total in random_play(make_env(KUHN), 6000, 2):
        assert total in (-2.0, -1.0, 1.0, 2.0)
        returns[seat].append(total)
    for seat, value in ((0, 0.125), (1, -0.125)):
        mean, se = np.mean(returns[seat]), np.std(returns[seat]) / np.sqrt(len(returns[seat]))
        assert abs(mean - value) < 4 * se, (seat, mean, se)


def test_a_seeded_episode_deals_the_same_cards():
    env = make_env(KUHN)
    first = [env.reset(seed=s)[0] for s in (4, 4, 6, 6)]
    assert np.array_equal(first[0], first[1]) and np.array_equal(first[2], first[3])


def test_three_player_kuhn_scores_the_games_value_in_each_seat():
    """A game's parameters in its id; the seat rotates over the three players with the seeds, and random play against
    two random players scores each seat's exact value (OpenSpiel's expected game score under uniform play)."""
    import pyspiel
    from open_spiel.python import policy as openspiel_policy
    from open_spiel.python.algorithms.expected_game_score import policy_value

    from tests.envs.games import random_play

    game = pyspiel.load_game("kuhn_poker(players=3)")
    uniform = openspiel_policy.UniformRandomPolicy(game)
    values = policy_value(game.new_initial_state(), [uniform] * 3)
    env = make_env(f"{KUHN}(players=3)")
    returns = {0: [], 1: [], 2: []}
    for seat, total in random_play(env, 9000, 2):
        returns[seat].append(total)
    assert [len(r) for r in returns.values()] == [3000] * 3  # seeds 0, 1, 2, ... seat it first, second, third
    for seat in range(3):
        mean, se = np.mean(returns[seat]), np.std(returns[seat]) / np.sqrt(len(returns[seat]))
        assert abs(mean - values[seat]) < 4 * se, (seat, mean, values[seat], se)


@pytest.mark.parametrize("game, says", [("no_such_game", "OpenSpiel has no game"),
                                         ("goofspiel", "not a turn-based game of two or more players"),
                                         ("kuhn_poker(players=1)", "seats 2 to 10 players; got 1"),
                                         ("kuhn_poker(decks=3)", "its defaults: players=2.; got 'decks=3'"),
                                         ("kuhn_poker(players=x)", "got 'players=x'"),
                                         ("kuhn_poker(players=3", "got 'kuhn_poker.players=3'")])
def test_a_game_we_cannot_play_is_one_line(game, says, capfd):
    with pytest.raises(ConfigError, match=says) as e:
        env_spec(f"openspiel:{game}")
    assert "\n" not in str(e.value) and capfd.readouterr().err == ""  # nothing of OpenSpiel's own on stderr
