"""Fixed players for the two-player games (``envs/multi_agent.py``): what a trained player is evaluated against
(``distrl eval RUN --opponent ...``). Each is a function from (observation, legal-action mask) to an action, the
observation as the env flattens it for the player to move."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

import numpy as np

from distrl.config import import_function
from distrl.errors import ConfigError

LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))


def _won(cells: int) -> bool:
    return any(all(cells >> i & 1 for i in line) for line in LINES)


@cache
def _negamax(mine: int, theirs: int) -> tuple[int, int]:
    """(value for the player to move: 1 win, 0 draw, -1 loss; its best cell) with both playing perfectly; cells are
    bit masks over tic-tac-toe's 9 squares, numbered as its actions."""
    free = [c for c in range(9) if not (mine | theirs) >> c & 1]
    if not free:
        return 0, -1
    best, best_cell = -2, free[0]
    for c in free:
        placed = mine | 1 << c
        value = 1 if _won(placed) else -_negamax(theirs, placed)[0]
        if value > best:
            best, best_cell = value, c
            if best == 1:
                break
    return best, best_cell


def tictactoe_minimax(observation: np.ndarray, mask: np.ndarray) -> int:
    """A perfect tic-tac-toe player (negamax over every position): it never loses. PettingZoo's observation holds,
    per square in action order, the mover's mark then the other player's."""
    planes = np.asarray(observation).reshape(9, 2) > 0.5
    mine = sum(1 << c for c in range(9) if planes[c, 0])
    theirs = sum(1 << c for c in range(9) if planes[c, 1])
    cell = _negamax(mine, theirs)[1]
    return cell if cell >= 0 and mask[cell] > 0.5 else int(np.flatnonzero(mask)[0])


def uniform_random(seed: int = 0) -> Callable[[np.ndarray, np.ndarray], int]:
    rng = np.random.default_rng(seed)
    return lambda observation, mask: int(rng.choice(np.flatnonzero(mask)))


NAMED = {"minimax": ("classic.tictactoe", tictactoe_minimax)}
# opponents built elsewhere, loaded by path as a user's module:function is (the league sits above the env layer)
FACTORIES = {"league": "distrl.league.opponent:LeagueOpponent"}


def opponent(name: str, env_id: str, seed: int = 0, **args) -> Callable:
    """``random``, ``minimax`` (tic-tac-toe only), ``module:function``, or ``league`` (with ``league`` and
    ``player``: the opponents a running league's coordinator chooses)."""
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
        return player
    if ":" not in name:
        raise ConfigError(f"an opponent (--opponent, --fixed, ?opponent=) is random, {', '.join(NAMED)} or "
                          f"module:function; got {name!r}")
    return import_function(name, "--opponent", "mygame.players:greedy")
