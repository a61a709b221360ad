"""Self-play leagues (the survey's coordinator for systems that need much self-play): the payoff table
(``payoff``), Elo ratings over time (``ratings``) and the choice of opponents and snapshots (``matchmaking``): naive
self-play, fictitious self-play and AlphaStar's prioritized fictitious self-play with main agents, main exploiters and
league exploiters."""

from distrl.league.matchmaking import KINDS, MODES, RULES, Matchmaker, Player
from distrl.league.payoff import PayoffTable
from distrl.league.ratings import EloRatings

__all__ = ["KINDS", "MODES", "RULES", "EloRatings", "Matchmaker", "PayoffTable", "Player"]
