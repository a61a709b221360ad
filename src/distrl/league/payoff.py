"""The league's payoff table: who beat whom, how often, with old games fading (AlphaStar keeps its counts with a
decay of 0.99 per game of the pair, so a win rate follows the players as they change). An unplayed pair's win rate
is 0.5. The undecayed totals are kept beside, for the reports (``league.csv``, the heatmap)."""

from __future__ import annotations

import numpy as np

RESULTS = {"win": (1.0, 0.0), "draw": (0.0, 1.0), "loss": (0.0, 0.0)}  # -> (wins, draws) for the home player


class PayoffTable:
    def __init__(self, decay: float = 0.99):
        if not 0.0 < decay <= 1.0:
            raise ValueError(f"decay must be in (0, 1]; got {decay}")
        self.decay = decay
        self.players: list[str] = []
        self._index: dict[str, int] = {}
        self._store = np.zeros((2, 3, 8, 8))  # [decayed, undecayed] x (games, wins, draws) x [home, away], capacity 8

    def add(self, player: str) -> None:
        if player in self._index:
            raise ValueError(f"player {player!r} is already in the table")
        self._index[player] = len(self.players)
        self.players.append(player)
        n, capacity = len(self.players), self._store.shape[-1]
        if n > capacity:  # doubled, so a league of n players costs O(n^2) memory moves in all, not per player
            grown = np.zeros((2, 3, 2 * capacity, 2 * capacity))
            grown[..., :capacity, :capacity] = self._store
            self._store = grown

    @property
    def _counts(self) -> np.ndarray:
        n = len(self.players)
        return self._store[0, :, :n, :n]

    @property
    def totals(self) -> np.ndarray:
        n = len(self.players)
        return self._store[1, :, :n, :n]

    def record(self, home: str, away: str, result: str) -> None:
        """One game's result for ``home`` ("win", "draw" or "loss"); ``away`` gets the mirror."""
        if result not in RESULTS:
            raise ValueError(f"result must be one of {', '.join(RESULTS)}; got {result!r}")
        h, a = self._index[home], self._index[away]
        wins, draws = RESULTS[result]
        for i, j, w in ((h, a, wins), (a, h, 1.0 - wins - draws)):
            self._counts[:, i, j] *= self.decay
            self._counts[:, i, j] += (1.0, w, draws)
            self.totals[:, i, j] += (1.0, w, draws)

    def win_rate(self, home: str, away: str) -> float:
        """P[home beats away], a draw counting half."""
        games, wins, draws = self._counts[:, self._index[home], self._index[away]]
        return 0.5 if games < 1e-12 else float((wins + 0.5 * draws) / games)

    def win_rates(self, home: str, aways: list[str]) -> np.ndarray:
        return np.array([self.win_rate(home, a) for a in aways])

    def games(self, home: str, away: str) -> int:
        return int(self.totals[0, self._index[home], self._index[away]])

    def matrix(self) -> np.ndarray:
        """Every pair's undecayed win rate (rows: home), NaN where unplayed."""
        games, wins, draws = self.totals
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(games > 0, (wins + 0.5 * draws) / games, np.nan)

    def state_dict(self) -> dict:
        return {"decay": self.decay, "players": list(self.players), "counts": self._counts.copy(),
                "totals": self.totals.copy()}

    @classmethod
    def from_state(cls, state: dict) -> PayoffTable:
        table = cls(float(state["decay"]))
        players = [str(p) for p in state["players"]]
        n = len(players)
        counts, totals = np.asarray(state["counts"], np.float64), np.asarray(state["totals"], np.float64)
        if counts.shape != (3, n, n) or totals.shape != (3, n, n) or not np.isfinite(counts).all() \
                or not np.isfinite(totals).all() or (counts < 0).any() or (totals < 0).any():
            raise ValueError(f"a payoff table of {n} players needs finite, non-negative counts of shape (3, {n}, {n})")
        for name, (games, wins, draws) in (("counts", counts), ("totals", totals)):
            with np.errstate(over="ignore"):  # counts near the float limit: their sum is inf, and refused
                excess = wins + draws - games
            if (excess > 1e-9 * (1 + games)).any():  # beyond a decayed count's rounding
                raise ValueError(f"a payoff table's {name} hold more wins and draws than games")
        if len(set(players)) != n:
            raise ValueError("a payoff table's players must be distinct")
        for p in players:
            table.add(p)
        table._store[0, :, :n, :n], table._store[1, :, :n, :n] = counts, totals
        return table
