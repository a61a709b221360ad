"""A league player's games: each episode's opponent comes from the coordinator with the result of the episode before,
its policy is pulled once per process and version (not per episode), and it plays only legal moves."""

import json
from contextlib import contextmanager
from types import SimpleNamespace

import numpy as np
import pytest

from distrl.api import resolve_configs
from distrl.core import shared
from distrl.envs import env_spec, make_env, make_vec_env
from distrl.league import EloRatings, Matchmaker
from distrl.league.coordinator import Coordinator
from distrl.league.opponent import Pool
from distrl.runtime.backends import share

GAME = "pettingzoo:classic.tictactoe_v3"


class Counting(Coordinator):
    def answer(self, request: bytes) -> bytes:
        op = json.loads(request)["op"]
        self.calls[op] = self.calls.get(op, 0) + 1
        return super().answer(request)


@contextmanager
def hosted(folder, system: str, mode: str):
    """A counting coordinator of ``system``'s policies, its player ``main`` published, hosted inline under ``folder``
    as a league hosts it for its players; yields (the coordinator, main's model)."""
    c = Counting(Matchmaker(mode, seed=0), EloRatings(), {"system": system, "settings": {}, "game": GAME})
    c.calls = {}
    module, _, cfg = resolve_configs(system, {"env": GAME})
    model = module.make_model(env_spec(GAME), cfg)
    c.add_player("main", "main")
    c.publish("main", model.state_dict())
    host = share("inline", c, "t")
    shared.register({str(folder): host.handle})
    try:
        yield c, model
    finally:
        shared.forget(str(folder))
        Pool.drop(str(folder))
        host.close()


@pytest.fixture
def league(tmp_path):
    with hosted(tmp_path, "ppo", "uniform") as (c, model):
        c.snapshot("main", model.state_dict())
        yield c, f"{GAME}?league={tmp_path}&player=main"


def test_the_coordinator_chooses_each_episode_and_hears_each_result(league):
    c, env_id = league
    env = make_vec_env(env_id, 2, seed=0)
    rng = np.random.default_rng(0)
    obs, _ = env.reset(seed=0)
    finished = 0
    for _ in range(200):
        mask = obs[:, -9:]
        # a finished game's last observation has no legal move: the step after it resets, whatever the action
        actions = np.array([rng.choice(np.flatnonzero(m)) if m.any() else 0 for m in mask])
        obs, rewards, terminated, truncated, infos = env.step(actions)
        assert "illegal" not in infos  # the learner's random legal moves; the opponent's are checked by the game
        finished += int(terminated.sum())
    env.close()
    games, tally, opponents = c.take("main")
    assert games == tally.sum()  # a game of two: one result per game
    # every finished episode is reported at the next reset (next-step autoreset): all but those ended on the last step
    assert finished - 2 <= tally.sum() <= finished and opponents == {"main@0": tally.sum()}
    assert c.matchmaker.payoff.games("main", "main@0") == tally.sum()
    assert c.calls["hello"] == 1 and c.calls["pull"] == 1  # one process, one policy: pulled once
    assert c.calls["next"] >= finished


def test_a_new_version_is_pulled_once(league):
    c, env_id = league
    c.matchmaker.mode = "naive"  # the player against its own latest weights
    env = make_vec_env(env_id, 1, seed=0)
    obs, _ = env.reset(seed=0)
    for step in range(60):
        if step == 30:
            c.publish("main", _weights(c))
        obs, *_ = env.step(np.array([np.argmax(obs[0, -9:])]))
    env.close()
    assert c.calls["pull"] == 2


def _weights(c):
    from safetensors.torch import load

    return load(c.pool["main"][1])


def test_evaluation_plays_random_in_place_of_the_league(league):
    c, env_id = league
    calls = dict(c.calls)
    env = make_env(env_id)  # no coordinator is asked: evaluation cannot rely on the league being up
    env.reset(seed=1)
    env.step(int(np.argmax(env.reset(seed=1)[0][-9:])))
    assert env.unwrapped.opponent is None and c.calls == calls


def test_a_recurrent_opponent_keeps_a_state_per_game_from_each_episodes_start(tmp_path):
    """R2D2's policy, shared by every game of the process, each game carrying its own LSTM state over the opponent's
    turns: what stepping the network alone from zeros over that game's observations gives, started anew each
    episode."""
    with hosted(tmp_path, "r2d2", "naive") as (c, model):
        _play_two_recurrent_games(c, model, tmp_path)


def _state(opponent):
    """The recurrent state of a two-player game's opponent: its one seat's."""
    (seat,) = opponent.seats.values()
    return seat.state


def _play_two_recurrent_games(c, model, folder) -> None:
    import torch

    def alone(seen):  # the network stepped by itself over one game's observations, from zeros
        state = model.initial_state(1) if seen else None
        with torch.inference_mode():
            for x in seen:
                _, state = model.step(torch.from_numpy(x).unsqueeze(0), state)
        return state

    def same(a, b):
        return (a is None and b is None) or (a is not None and b is not None and all(map(torch.equal, a, b)))

    games = []
    for _ in range(2):  # two games of one process: one policy, two states
        env = make_env(f"{GAME}?league={folder}&player=main", training=True)
        opponent, seen = env.unwrapped.opponent, []
        watched = SimpleNamespace(
            play_seat=lambda agent, observation, mask, opponent=opponent, seen=seen: (
                seen.append(np.concatenate([observation, mask]).astype(np.float32)),
                opponent.play_seat(agent, observation, mask))[1],
            game_starts=lambda others, outcomes, opponent=opponent, seen=seen: (
                seen.clear(), opponent.game_starts(others, outcomes)))
        env.unwrapped.opponent = watched
        games.append((env, opponent, seen))
    for seed in (1, 2, 3):  # the opponent moves first in odd seeds' episodes, second in even ones
        live = []
        for env, opponent, seen in games:
            obs, _ = env.reset(seed=seed)
            assert same(_state(opponent), alone(seen))  # its state: this episode's moves only
            live.append([env, obs, False])
        while not all(done for _, _, done in live):  # the two games' moves interleaved
            for game in live:
                env, obs, done = game
                if not done:
                    obs, _, terminated, truncated, _ = env.step(int(np.flatnonzero(obs[-9:])[-1]))
                    game[1:] = [obs, terminated or truncated]
        for _, opponent, seen in games:
            assert seen and same(_state(opponent), alone(seen))
    assert _state(games[0][1]) is not _state(games[1][1]) and c.calls["pull"] == 1  # one policy, pulled once


def test_each_step_says_whether_its_games_opponent_is_a_fixed_player(tmp_path):
    """A league with a fixed random player in half its games: every step's ``versus_fixed`` is the choice the
    coordinator made for that episode (what Ape-X DQN's second head learns from), and an evaluation env, which plays
    random in the league's place, says so too."""
    with hosted(tmp_path, "apex-dqn", "uniform") as (c, model):
        c.snapshot("main", model.state_dict())
        c.matchmaker.fixed_share = 0.5
        c.add_fixed("random")
        env = make_env(f"{GAME}?league={tmp_path}&player=main", training=True)
        rng = np.random.default_rng(0)
        kinds = []
        for _ in range(30):
            obs, info = env.reset()
            opponent = env.unwrapped.opponent
            fixed = opponent.versus_fixed
            assert info["versus_fixed"] is fixed and fixed == (opponent.seats[next(iter(opponent.seats))].id
                                                                == "random")
            done = False
            while not done:
                obs, _, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(obs[-9:]))))
                assert info["versus_fixed"] is fixed
                done = terminated or truncated
            kinds.append(fixed)
        env.close()
        assert 0 < sum(kinds) < 30
    _, info = make_env(f"{GAME}?league={tmp_path}&player=main").reset(seed=0)
    assert info["versus_fixed"] is True
