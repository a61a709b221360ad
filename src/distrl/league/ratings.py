"""Elo ratings of the league's players over time (``ops/league.py``'s update, one game at a time): a snapshot
joins at its parent's current rating, so a frozen player starts where its learner stood when it was taken.
``keep_history=False`` keeps the current ratings only (a league writes them down once per slice instead: its games
number in the hundreds of thousands)."""

from __future__ import annotations

from distrl.league.payoff import RESULTS
from distrl.ops.league import elo_update

INITIAL = 1000.0
SCORES = {result: wins + 0.5 * draws for result, (wins, draws) in RESULTS.items()}  # a draw scores half


class EloRatings:
    def __init__(self, k: float = 16.0, keep_history: bool = True):
        self.k, self.keep_history = k, keep_history
        self.ratings: dict[str, float] = {}
        self.history: list[tuple[int, str, float]] = []  # (env steps, player, rating after a change)

    def add(self, player: str, steps: int = 0, like: str | None = None) -> None:
        self.ratings[player] = self.ratings[like] if like is not None else INITIAL
        if self.keep_history:
            self.history.append((steps, player, self.ratings[player]))

    def record(self, home: str, away: str, result: str, steps: int) -> None:
        if result not in SCORES:
            raise ValueError(f"result must be one of {', '.join(SCORES)}; got {result!r}")
        self.ratings[home], self.ratings[away] = elo_update(self.ratings[home], self.ratings[away], SCORES[result],
                                                            self.k)
        if self.keep_history:
            self.history += [(steps, home, self.ratings[home]), (steps, away, self.ratings[away])]
