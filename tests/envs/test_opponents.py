"""The fixed players the two-player games are evaluated against: tic-tac-toe's minimax is perfect (never loses to
a random player, draws with itself) and varies its lines, a policy's worst case over every opponent is what replaying
each opponent line in PettingZoo's own game gives, and ``distrl eval --opponent`` plays them, counting wins, draws and
losses."""

import functools

import numpy as np
import pytest

import distrl
from distrl.cli import main
from distrl.envs import make_env
from distrl.envs.opponents import (
    connect_four_heuristic,
    tictactoe_minimax,
    tictactoe_versus_random,
    tictactoe_worst_case,
    uniform_random,
)
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
    against_random = _play(tictactoe_minimax(0), uniform_random(1))
    assert min(against_random) >= 0 and against_random.count(1.0) > 40
    assert set(_play(tictactoe_minimax(0), tictactoe_minimax(1), games=12)) == {0.0}


def test_minimax_varies_its_lines_among_the_perfect_moves():
    """Its replies to one fixed line differ from game to game: 200 games against a policy test more than one line."""
    first_free = lambda obs, mask: int(np.flatnonzero(mask)[0])  # noqa: E731
    env = make_env(GAME)
    env.unwrapped.opponent = tictactoe_minimax(3)
    replies = set()
    for seed in range(0, 40, 2):  # even seeds: the learner moves first, minimax replies to square 0
        obs, _ = env.reset(seed=seed)
        obs, *_ = env.step(first_free(obs[:-9], obs[-9:]))
        replies.add(int(np.flatnonzero(obs[:-9].reshape(9, 2)[:, 1])[0]))
    assert replies == {4}  # square 0 taken: the centre is the only reply that does not lose
    openings = set()
    for seed in range(1, 40, 2):  # odd: minimax opens, and every opening square draws
        obs, _ = env.reset(seed=seed)
        openings.add(int(np.flatnonzero(obs[:-9].reshape(9, 2)[:, 1])[0]))
    assert len(openings) > 3


class _Branch(Exception):
    def __init__(self, moves):
        self.moves = moves


def _replayed_worst_case(act, seat):
    """The policy's results against every sequence of legal opponent moves, each game played out in PettingZoo's own
    tic-tac-toe (the env): an independent count to check ``tictactoe_worst_case`` against."""
    results = [total for total, _ in _replayed_games(act, seat)]
    return {"worst": int(min(results)), "games": len(results), "lost": sum(r < 0 for r in results)}


def _replayed_games(act, seat):
    """Every game any sequence of legal opponent moves makes against the policy, played out in the env: (the policy's
    return, the game's probability when the opponent picks uniformly among its legal moves)."""
    env = make_env(GAME).unwrapped
    results = []

    def play(line, probability=1.0):
        moves = iter(line)

        def opponent(obs, mask):
            chosen = next(moves, None)
            if chosen is None:  # a choice past the line: each of its legal moves is a line of its own
                raise _Branch([int(m) for m in np.flatnonzero(mask)])
            return chosen

        env.opponent = opponent
        try:
            obs, _ = env.reset(seed=seat)
            total, done = 0.0, False
            while not done:
                obs, reward, terminated, truncated, _ = env.step(act(obs))
                total, done = total + reward, terminated or truncated
        except _Branch as branch:
            for move in branch.moves:
                play([*line, move], probability / len(branch.moves))
            return
        results.append((total, probability))

    play([])
    return results


@pytest.mark.parametrize("policy", ["first_free", "minimax", "random"])
def test_worst_case_is_what_every_opponent_line_gives(policy):
    if policy == "first_free":
        act = lambda obs: int(np.flatnonzero(obs[-9:])[0])  # noqa: E731
    else:
        player = tictactoe_minimax(0) if policy == "minimax" else uniform_random(5)
        chosen = {}  # deterministic per position, as a trained greedy policy is

        def act(obs):
            key = obs.tobytes()
            if key not in chosen:
                chosen[key] = player(obs[:-9], obs[-9:])
            return chosen[key]
    worst = tictactoe_worst_case(act)
    assert worst == [_replayed_worst_case(act, 0), _replayed_worst_case(act, 1)]
    if policy == "minimax":
        assert [w["worst"] for w in worst] == [0, 0] and [w["lost"] for w in worst] == [0, 0]
    else:
        assert all(w["worst"] == -1 and w["lost"] > 0 for w in worst)


def _deterministic(player):
    chosen = {}  # one move per position, as a trained greedy policy plays

    def act(obs):
        key = obs.tobytes()
        if key not in chosen:
            chosen[key] = player(obs[:-9], obs[-9:])
        return chosen[key]

    return act


@pytest.mark.parametrize("policy", ["first_free", "minimax", "random"])
def test_the_chances_against_random_play_are_every_games_probability_summed(policy):
    """Against the env played out along every opponent line, each weighted by its probability under uniform play."""
    if policy == "first_free":
        act = lambda obs: int(np.flatnonzero(obs[-9:])[0])  # noqa: E731
    else:
        act = _deterministic(tictactoe_minimax(1) if policy == "minimax" else uniform_random(3))
    chances = tictactoe_versus_random(act)
    for seat, c in enumerate(chances):
        games = _replayed_games(act, seat)
        assert sum(c.values()) == pytest.approx(1.0)
        assert c["win"] == pytest.approx(sum(p for r, p in games if r > 0))
        assert c["loss"] == pytest.approx(sum(p for r, p in games if r < 0))
    if policy == "minimax":
        assert [c["loss"] for c in chances] == [0.0, 0.0]


LINES = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)]


def _won(cells: int) -> bool:
    return any(all(cells >> i & 1 for i in line) for line in LINES)


def _free(mine: int, theirs: int) -> list[int]:
    return [c for c in range(9) if not (mine | theirs) >> c & 1]


@functools.cache
def _value(mine: int, theirs: int) -> int:
    """The game's value for the player to move (1, 0, -1), both playing perfectly: the tests' own search."""
    return max((1 if _won(mine | 1 << c) else -_value(theirs, mine | 1 << c) for c in _free(mine, theirs)), default=0)


def _moves(mine: int, theirs: int, perfect: bool) -> list[int]:
    """The free squares, or with ``perfect`` those that keep the game's value."""
    value = _value(mine, theirs)
    return [c for c in _free(mine, theirs)
            if not perfect or (1 if _won(mine | 1 << c) else -_value(theirs, mine | 1 << c)) == value]


@functools.cache
def _expectimax(mine: int, theirs: int, to_move: bool, perfect: bool) -> float:
    """The best chance of winning against uniform random play, by exhaustive search; ``perfect``: choosing only among
    the moves that keep the game's value (a player that never loses to anyone)."""
    free = _free(mine, theirs)
    if not free:
        return 0.0
    if not to_move:
        return sum(0.0 if _won(theirs | 1 << c) else _expectimax(mine, theirs | 1 << c, True, perfect)
                   for c in free) / len(free)
    return max(_after(mine, theirs, c, perfect) for c in _moves(mine, theirs, perfect))


def _after(mine: int, theirs: int, cell: int, perfect: bool) -> float:
    return 1.0 if _won(mine | 1 << cell) else _expectimax(mine | 1 << cell, theirs, False, perfect)


def _best_against_random(perfect: bool):
    def act(obs):
        planes = obs[:18].reshape(9, 2) > 0.5
        mine = sum(1 << c for c in range(9) if planes[c, 0])
        theirs = sum(1 << c for c in range(9) if planes[c, 1])
        return max(_moves(mine, theirs, perfect), key=lambda c: _after(mine, theirs, c, perfect))

    return act


@pytest.mark.parametrize("perfect", [False, True], ids=["any-policy", "perfect-player"])
def test_the_best_policy_against_random_play_wins_what_expectimax_says_and_no_policy_more(perfect):
    chances = tictactoe_versus_random(_best_against_random(perfect))
    assert chances[0]["win"] == pytest.approx(_expectimax(0, 0, True, perfect))
    assert chances[1]["win"] == pytest.approx(_expectimax(0, 0, False, perfect))
    # the ceilings the league guide cites: 99.5% as the first player; 93.9% as the second, 91.6% for a player that
    # never loses (the claim's 95% over both seats is 0.6 points below the perfect player's 95.6%)
    assert [round(c["win"], 3) for c in chances] == ([0.995, 0.916] if perfect else [0.995, 0.939])
    if perfect:
        assert [c["loss"] for c in chances] == [0.0, 0.0]
    for act in (lambda obs: int(np.flatnonzero(obs[-9:])[0]), _deterministic(tictactoe_minimax(0))):
        assert all(c["win"] <= b["win"] + 1e-12 for c, b in zip(tictactoe_versus_random(act), chances))


def test_eval_against_an_opponent_counts_the_results(tmp_path, capsys):
    run = tmp_path / "ttt"
    distrl.train("ppo", env=GAME, runtime="inline", total_steps=2000, run_dir=str(run), progress=False, num_envs=8,
                 unroll_length=128)
    result = distrl.evaluate(run, episodes=20, opponent="minimax")
    assert result["opponent"] == "minimax" and result["losses"] >= 10  # a barely trained player: minimax wins
    assert result["wins"] == 0 and result["wins"] + result["draws"] + result["losses"] == 20
    assert distrl.evaluate(run, episodes=4)["opponent"] == "random"
    assert main(["eval", str(run), "--opponent", "alphazero"]) == 2
    assert "random, minimax, heuristic or module:function" in capsys.readouterr().err


def test_an_opponent_for_an_env_that_is_not_a_game_is_one_line(tmp_path):
    run = tmp_path / "cartpole"
    distrl.train("apex-dqn", env="CartPole-v1", runtime="inline", total_steps=1000, run_dir=str(run), progress=False)
    with pytest.raises(ConfigError, match="goes with a game of two or more players"):
        distrl.evaluate(run, opponent="random")


def _connect_four(mine=(), theirs=()):
    planes = np.zeros((6, 7, 2), np.float32)
    for r, c in mine:
        planes[r, c, 0] = 1
    for r, c in theirs:
        planes[r, c, 1] = 1
    return planes.ravel(), np.ones(7, np.float32)


@pytest.mark.parametrize("mine, theirs, plays", [
    ([(5, 0), (5, 1), (5, 2)], [(4, 0), (4, 1), (5, 6)], {3}),  # four in the bottom row: it wins
    ([(4, 0), (4, 1), (5, 6)], [(5, 0), (5, 1), (5, 2)], {3}),  # theirs would be: it blocks
    ([(5, 0), (5, 2)], [(4, 0), (4, 1), (4, 2), (5, 1)], {2, 4}),  # (4, 3) wins for them: not column 3, the centre
])
def test_the_connect_four_heuristic_wins_blocks_and_plays_no_square_under_a_loss(mine, theirs, plays):
    heuristic = connect_four_heuristic(0)
    assert {heuristic(*_connect_four(mine, theirs)) for _ in range(20)} == plays


def test_the_connect_four_heuristic_beats_random_play():
    env = make_env("pettingzoo:classic.connect_four_v3")
    env.unwrapped.opponent = uniform_random(1)
    heuristic, wins = connect_four_heuristic(2), 0
    for seed in range(40):
        obs, _ = env.reset(seed=seed)
        done, total = False, 0.0
        while not done:
            obs, reward, terminated, truncated, _ = env.step(heuristic(obs[:-7], obs[-7:]))
            total, done = total + reward, terminated or truncated
        wins += total > 0
    assert wins >= 38
