"""OpenSpiel's two-player games as distrl envs: the turn passes as the game says, chance is drawn from the episode's
seed apart from the opponent's own draws, the rewards are the game's returns (random play against random play in
Kuhn poker scores the game's exact value, +-1/8), and games that are not two-player turn-based are one line."""

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


@pytest.mark.parametrize("game, says", [("no_such_game", "OpenSpiel has no game"),
                                         ("goofspiel", "not a two-player turn-based game"),
                                         ("kuhn_poker(players=3)", "OpenSpiel has no game")])
def test_a_game_we_cannot_play_is_one_line(game, says):
    with pytest.raises(ConfigError, match=says) as e:
        env_spec(f"openspiel:{game}")
    assert "\n" not in str(e.value)
