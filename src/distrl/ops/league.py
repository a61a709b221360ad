"""League math: prioritized fictitious self-play's opponent weights and Elo ratings.

PFSP (Vinyals et al. 2019, "Grandmaster level in StarCraft II", Methods: prioritized fictitious self-play) picks
opponent B for player A with probability f(P[A beats B]) / sum_C f(P[A beats C]). The weightings:

- ``squared``: f(x) = (1 - x)^2, the opponents A loses to most (the main agents' "hard" weighting);
- ``variance``: f(x) = x (1 - x), the opponents of A's own level (a curriculum against a strong one);
- ``linear``: f(x) = 1 - x; ``linear_capped``: f(x) = min(0.5, 1 - x) (the league exploiters').

Where every weight is 0 (A beats every opponent always), the choice is uniform. Elo (Elo 1978): A's expected score
against B is 1 / (1 + 10^((R_B - R_A) / 400)); a game moves both ratings by k (S_A - E_A), so their sum is kept.
"""

from __future__ import annotations

import numpy as np

WEIGHTINGS = {
    "squared": lambda x: (1.0 - x) ** 2,
    "variance": lambda x: x * (1.0 - x),
    "linear": lambda x: 1.0 - x,
    "linear_capped": lambda x: np.minimum(0.5, 1.0 - x),
}


def pfsp_probabilities(win_rates, weighting: str = "squared") -> np.ndarray:
    """The probability of choosing each opponent, from A's win rates against them (each in [0, 1])."""
    if weighting not in WEIGHTINGS:
        raise ValueError(f"weighting must be one of {', '.join(WEIGHTINGS)}; got {weighting!r}")
    x = np.asarray(win_rates, dtype=np.float64)
    if x.ndim != 1 or x.size == 0:
        raise ValueError(f"win_rates must be a non-empty vector; got shape {x.shape}")
    if not (np.isfinite(x).all() and (x >= 0).all() and (x <= 1).all()):
        raise ValueError("win rates must lie in [0, 1]")
    weights = WEIGHTINGS[weighting](x)
    total = weights.sum()
    return np.full(x.size, 1.0 / x.size) if total < 1e-10 else weights / total


def elo_expected(rating_a: float, rating_b: float) -> float:
    """A's expected score (win 1, draw 0.5, loss 0) against B."""
    return 1.0 / (1.0 + 10.0 ** ((rating_b - rating_a) / 400.0))


def elo_update(rating_a: float, rating_b: float, score_a: float, k: float = 16.0) -> tuple[float, float]:
    """Both ratings after one game in which A scored ``score_a`` (1, 0.5 or 0)."""
    if not 0.0 <= score_a <= 1.0:
        raise ValueError(f"score_a must be in [0, 1]; got {score_a}")
    delta = k * (score_a - elo_expected(rating_a, rating_b))
    return rating_a + delta, rating_b - delta


def monotonic_suffix_removed(win_rates) -> int:
    """How many of the oldest-first ``win_rates`` to keep once the suffix over which they only fall is cut: the
    snapshots A beats less and less as they get newer are not forgotten ones (AlphaStar's check for forgetting)."""
    x = np.asarray(win_rates, dtype=np.float64)
    for i in range(x.size - 1, 0, -1):
        if x[i - 1] < x[i]:
            return i + 1
    return 0
