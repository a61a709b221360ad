"""A population that plays itself: each member's games are played against the other members (and itself), as the FTW
agents of Jaderberg et al. 2019 (Science 364, "Human-level performance in 3D multiplayer games with population-based
reinforcement learning") were trained.

The population shares one service among its members' programs: a league's coordinator (``league/coordinator.py``)
whose players are the members, each a main agent, hosted for where the members' games run
(``runtime.backends.share``). Each game's opponent is chosen there (a member drawn uniformly, the member itself
included, by the league's matchmaker with every player a main agent and no snapshot) and plays that member's latest
weights: its first ones as its learner is built (a game that asks before they are there waits for them), then each
slice's. PBT itself is unchanged: a member's score is the mean return of its slice, here its games' wins minus losses
per game against the population, itself included. Its payoff table and Elo ratings are this session's: a resumed
population starts them anew.
"""

from __future__ import annotations

import secrets
from pathlib import Path

from distrl.core import shared
from distrl.league.coordinator import Coordinator
from distrl.league.matchmaking import Matchmaker
from distrl.league.opponent import Pool
from distrl.league.ratings import EloRatings
from distrl.league.run import league_env, played_settings
from distrl.runtime.backends import share


class PopulationGames:
    """The coordinator the members' games share, and the names they reach it by."""

    def __init__(self, pop_dir: Path, saved: dict):
        self.dir, self.n = pop_dir, saved["population"]
        folders = [pop_dir / "members" / self.id(i) for i in range(self.n)]
        recipe = {"system": saved["system"], "settings": played_settings(saved["system"], saved["settings"], folders),
                  "game": saved["env"]}
        self.coordinator = Coordinator(Matchmaker("pfsp", seed=saved["seed"]), EloRatings(keep_history=False), recipe)
        for i in range(self.n):
            self.coordinator.add_player(self.id(i), "main")
        self.runtime = "ray" if saved["runtime"] == "ray" else saved["member_runtime"]
        self.host = None

    def open(self) -> None:
        """Host the coordinator for where the members' games run (a new secret each session, only in the handles)."""
        self.host = share(self.runtime, self.coordinator, secrets.token_urlsafe(24))

    @staticmethod
    def id(i: int) -> str:
        return f"m{i}"

    def member_settings(self, i: int, game: str) -> dict:
        """What member ``i``'s trainer needs to play: its env (the game, its opponents from here) and the handle."""
        return {"env": league_env(game, self.dir, self.id(i)), "shared": {str(self.dir): self.host.handle}}

    def publish(self, i: int, model) -> None:
        self.coordinator.publish(self.id(i), model)

    def results(self, i: int) -> list[int]:
        """Member ``i``'s games won, drawn and lost since the last call."""
        _, tally, _ = self.coordinator.take(self.id(i))
        return [int(x) for x in tally]

    def summary(self) -> dict:
        c = self.coordinator
        with c.lock:
            ids = [self.id(i) for i in range(self.n)]
            games = {a: {b: c.matchmaker.payoff.games(a, b) for b in ids if b != a} for a in ids}
            return {"games": games, "ratings": {m: round(c.ratings.ratings[m], 2) for m in ids}}

    def close(self) -> None:
        shared.forget(str(self.dir))
        Pool.drop(str(self.dir))
        if self.host is not None:
            self.host.close()
