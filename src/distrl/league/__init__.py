"""Self-play leagues (the survey's coordinator for systems that need much self-play): ``distrl league`` (``run``), its
learning players and where they run (``players``), the coordinator and its gRPC transport (``coordinator``,
``server``), a player's opponent inside its game env (``opponent``), the payoff table (``payoff``), Elo ratings over
time (``ratings``), the choice of opponents and snapshots (``matchmaking``: naive self-play, fictitious self-play and
AlphaStar's prioritized fictitious self-play with main agents, main exploiters and league exploiters), NashConv
(``exploitability``) and the pictures (``reports``)."""

from distrl.league.matchmaking import KINDS, MODES, RULES, Entry, Matchmaker
from distrl.league.payoff import PayoffTable
from distrl.league.ratings import EloRatings

__all__ = ["KINDS", "MODES", "RULES", "EloRatings", "Matchmaker", "PayoffTable", "Entry"]
