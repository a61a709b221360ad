"""Fixed players for the games (``envs/multi_agent.py``): what a trained player is evaluated against
(``distrl eval RUN --opponent ...``) and what a league may hold (``--fixed``). Each is built from a seed (its
tie-breaks) into a function from (observation, legal-action mask) to an action, the observation as the env flattens
it for the player to move: random play, tic-tac-toe's perfect player, Connect Four's rules of thumb. And a
tic-tac-toe policy's exact worst case over every opponent, and its exact chances against random play."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

import numpy as np

from distrl.config import import_function
from distrl.errors import ConfigError

FULL = (1 << 9) - 1
LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))


def _won(cells: int) -> bool:
    return any(all(cells >> i & 1 for i in line) for line in LINES)


def _free(mine: int, theirs: int) -> list[int]:
    return [c for c in range(9) if not (mine | theirs) >> c & 1]


def _move_value(mine: int, theirs: int, cell: int) -> int:
    """The value, for the player to move, of taking ``cell`` and then both playing perfectly."""
    placed = mine | 1 << cell
    return 1 if _won(placed) else -negamax(theirs, placed)


@cache
def negamax(mine: int, theirs: int) -> int:
    """The value of a position for the player to move (1 win, 0 draw, -1 loss) with both playing perfectly; cells are
    bit masks over tic-tac-toe's 9 squares, numbered as its actions."""
    best = -1 if _free(mine, theirs) else 0
    for c in _free(mine, theirs):
        best = max(best, _move_value(mine, theirs, c))
        if best == 1:
            break
    return best


@cache
def best_cells(mine: int, theirs: int) -> tuple[int, ...]:
    """Every square a perfect player may take: those keeping the position's value."""
    value = negamax(mine, theirs)
    return tuple(c for c in _free(mine, theirs) if _move_value(mine, theirs, c) == value)


def board(observation: np.ndarray) -> tuple[int, int]:
    """(the mover's squares, the other player's) as bit masks, from PettingZoo's observation: per square in action
    order, the mover's mark then the other player's."""
    planes = np.asarray(observation).reshape(9, 2) > 0.5
    return sum(1 << c for c in range(9) if planes[c, 0]), sum(1 << c for c in range(9) if planes[c, 1])


def tictactoe_minimax(seed: int = 0) -> Callable[[np.ndarray, np.ndarray], int]:
    """A perfect tic-tac-toe player (negamax over every position): it never loses, and it chooses uniformly among the
    moves that keep the position's value, so that its games against a policy cover every line a perfect player may
    choose, not one."""
    rng = np.random.default_rng(seed)

    def act(observation: np.ndarray, mask: np.ndarray) -> int:
        cells = [c for c in best_cells(*board(observation)) if mask[c] > 0.5]
        return int(rng.choice(cells)) if cells else int(np.flatnonzero(mask)[0])

    return act


def tictactoe_worst_case(act: Callable[[np.ndarray], int]) -> list[dict[str, int]]:
    """How a deterministic tic-tac-toe policy does against every opponent at once: per seat (first, then second), its
    result against the best response to it (``worst``: 1 win, 0 draw, -1 loss; a perfect policy's is 0 in both) and,
    over every sequence of legal opponent moves, how many games there are and how many it loses. ``act`` maps the
    env's observation (PettingZoo's planes, then the legal-action mask) to an action; an illegal one loses."""

    @cache
    def policy_moves(mine: int, theirs: int) -> tuple[int, int, int]:
        """(worst result, games, games lost) for the policy to move, with `mine` its squares."""
        if mine | theirs == FULL:
            return 0, 1, 0
        cell = int(act(_observation(mine, theirs)))
        if not 0 <= cell < 9 or (mine | theirs) >> cell & 1:
            return -1, 1, 1
        placed = mine | 1 << cell
        if _won(placed):
            return 1, 1, 0
        return opponent_moves(placed, theirs)

    @cache
    def opponent_moves(mine: int, theirs: int) -> tuple[int, int, int]:
        free = _free(mine, theirs)
        if not free:
            return 0, 1, 0
        worst, games, lost = 1, 0, 0
        for c in free:
            placed = theirs | 1 << c
            w, g, lo = (-1, 1, 1) if _won(placed) else policy_moves(mine, placed)
            worst, games, lost = min(worst, w), games + g, lost + lo
        return worst, games, lost

    return [dict(zip(("worst", "games", "lost"), result)) for result in (policy_moves(0, 0), opponent_moves(0, 0))]


def tictactoe_versus_random(act: Callable[[np.ndarray], int]) -> list[dict[str, float]]:
    """The exact chances that a deterministic tic-tac-toe policy wins, draws and loses against a player choosing
    uniformly among the free squares, per seat (first, then second): every game weighted by its probability, where
    200 sampled games measure a 95% win rate only to about 1.5 points (one standard error). ``act`` as for
    :func:`tictactoe_worst_case`; an illegal move loses. The best any policy can do (expectimax) is 99.5% wins as the
    first player and 93.9% as the second; a policy that never loses, to anyone, 99.5% and 91.6%."""

    @cache
    def policy_moves(mine: int, theirs: int) -> tuple[float, float, float]:
        if mine | theirs == FULL:
            return 0.0, 1.0, 0.0
        cell = int(act(_observation(mine, theirs)))
        if not 0 <= cell < 9 or (mine | theirs) >> cell & 1:
            return 0.0, 0.0, 1.0
        placed = mine | 1 << cell
        return (1.0, 0.0, 0.0) if _won(placed) else opponent_moves(placed, theirs)

    @cache
    def opponent_moves(mine: int, theirs: int) -> tuple[float, float, float]:
        free = _free(mine, theirs)
        if not free:
            return 0.0, 1.0, 0.0
        outcomes = [(0.0, 0.0, 1.0) if _won(theirs | 1 << c) else policy_moves(mine, theirs | 1 << c) for c in free]
        return tuple(float(p) for p in np.mean(outcomes, axis=0))

    return [dict(zip(("win", "draw", "loss"), chances)) for chances in (policy_moves(0, 0), opponent_moves(0, 0))]


def _observation(mine: int, theirs: int) -> np.ndarray:
    """PettingZoo's tic-tac-toe observation for the player to move, flattened as distrl's games give it: per square
    its mark then the other player's, then the legal-action mask."""
    planes = [(mine >> c & 1, theirs >> c & 1) for c in range(9)]
    mask = [float(not (mine | theirs) >> c & 1) for c in range(9)]
    return np.concatenate([np.asarray(planes, np.float32).ravel(), np.asarray(mask, np.float32)])


ROWS, COLUMNS = 6, 7
DIRECTIONS = ((0, 1), (1, 0), (1, 1), (1, -1))


def _connects_four(stones: np.ndarray, row: int, column: int) -> bool:
    """Whether a stone at (row, column) would complete four in a line of ``stones`` (a 6 x 7 boolean board)."""
    for dr, dc in DIRECTIONS:
        run = 1
        for sign in (1, -1):
            r, c = row + sign * dr, column + sign * dc
            while 0 <= r < ROWS and 0 <= c < COLUMNS and stones[r, c]:
                run, r, c = run + 1, r + sign * dr, c + sign * dc
        if run >= 4:
            return True
    return False


def connect_four_heuristic(seed: int = 0) -> Callable[[np.ndarray, np.ndarray], int]:
    """A fixed Connect Four player of the usual rules of thumb: win where it can, block where it must, never drop a
    stone under a square that wins for the other player, else play nearest the centre (ties at random).
    PettingZoo's observation: 6 x 7 x 2, the mover's stones then the other player's, row 5 the bottom."""
    rng = np.random.default_rng(seed)

    def act(observation: np.ndarray, mask: np.ndarray) -> int:
        planes = np.asarray(observation).reshape(ROWS, COLUMNS, 2) > 0.5
        mine, theirs = planes[..., 0], planes[..., 1]
        legal = [int(c) for c in np.flatnonzero(np.asarray(mask) > 0.5)]
        lands = {c: int(np.flatnonzero(~(mine[:, c] | theirs[:, c])).max()) for c in legal}
        for stones in (mine, theirs):  # a win now, else the other player's next win blocked
            for c in legal:
                if _connects_four(stones, lands[c], c):
                    return c
        safe = [c for c in legal if lands[c] == 0 or not _connects_four(theirs, lands[c] - 1, c)]
        candidates = safe or legal
        score = np.array([-abs(c - COLUMNS // 2) for c in candidates], float) + rng.random(len(candidates)) * 0.5
        return candidates[int(np.argmax(score))]

    return act


def uniform_random(seed: int = 0) -> Callable[[np.ndarray, np.ndarray], int]:
    rng = np.random.default_rng(seed)
    return lambda observation, mask: int(rng.choice(np.flatnonzero(mask)))


NAMED = {"minimax": ("classic.tictactoe", tictactoe_minimax),
         "heuristic": ("classic.connect_four", connect_four_heuristic)}
# opponents built elsewhere, loaded by path as a user's module:function is (the league sits above the env layer)
FACTORIES = {"league": "distrl.league.opponent:LeagueOpponent"}


def opponent(name: str, env_id: str, seed: int = 0, **args) -> Callable:
    """``random``, ``minimax`` (tic-tac-toe only), ``heuristic`` (Connect Four only), ``module:function``, or
    ``league`` (with ``league`` and ``player``: the opponents a running league's coordinator chooses)."""
    if name in FACTORIES:
        if not args:  # a league's opponents come with the league's folder and the player (its env id's ?league=)
            raise ConfigError(f"opponent {name!r} is the league's own (an env id's ?league=DIR&player=ID), not one "
                              "to name")
        return import_function(FACTORIES[name], "opponent", FACTORIES[name])(**args)
    if name == "random":
        return uniform_random(seed)
    if name in NAMED:
        game, player = NAMED[name]
        if game not in env_id:
            raise ConfigError(f"--opponent {name} plays {game} only; this run's env is {env_id}")
        return player(seed)
    if ":" not in name:
        raise ConfigError(f"an opponent (--opponent, --fixed, ?opponent=) is random, {', '.join(NAMED)} or "
                          f"module:function; got {name!r}")
    return import_function(name, "the opponent", "mygame.players:greedy")
