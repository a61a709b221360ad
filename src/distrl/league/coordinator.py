"""The league's coordinator: the state every player's games reach, one per league, in the league's process.

It is a service the players' programs share (``core.protocols.SharedService``): the league hosts it on the players'
runtime (``runtime.backends.share``: a direct call for inline players, a token-admitted gRPC server for players in
other processes or on Ray) and gives each player the handle. It answers three requests, each a JSON object:

- ``hello``: how to build a policy of the pool (the system, its settings, the game), once per client;
- ``next``: the opponents of a player's next episode, one per other seat (``seats``), each chosen by the
  matchmaker there and then, with the player's results in the episode before, one per seat: its return above,
  equal to or below that seat's (the payoff table and the ratings count each, as a game of two would). It waits
  for the player's own first weights (published as its learner is built, which may be while its envs reset); an
  opponent whose first weights are not in the pool yet (a player still starting) is replaced by the player itself;
- ``pull``: a policy's weights by id (safetensors bytes) and their version: a frozen snapshot is published once and
  never changes (version 1); a learning player's latest weights get a new version each time the league publishes
  them. Clients keep what they pulled, so a policy travels once per process and version, never per episode.

Every request is checked before it touches the state: a message that is not one of these, or names a player or a
policy the league does not hold, is refused with one line and changes nothing.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping

import numpy as np
import torch
from safetensors.torch import save

from distrl.league.matchmaking import Matchmaker
from distrl.league.payoff import RESULTS
from distrl.league.ratings import EloRatings

REQUEST_BYTES = 4096
MAX_SEATS = 15  # opponents in one game: what a request of at most REQUEST_BYTES can report results of
FIRST_WEIGHTS_TIMEOUT_S = 300.0
OUTCOMES = tuple(RESULTS)  # win, draw, loss: the tally's columns


def _bytes(tensors: Mapping[str, torch.Tensor]) -> bytes:
    return save({k: v.detach().cpu().contiguous() for k, v in tensors.items()})


class Coordinator:
    request_bytes = REQUEST_BYTES

    def __init__(self, matchmaker: Matchmaker, ratings: EloRatings, recipe: Mapping):
        self.lock = threading.Lock()
        self.published = threading.Condition(self.lock)
        self.matchmaker, self.ratings = matchmaker, ratings
        self.recipe = dict(recipe)  # {"system", "settings", "game"}: what a client builds a pool policy with
        self.pool: dict[str, tuple[int, bytes]] = {}
        self.steps: dict[str, int] = {}  # a learning player's env steps, for the ratings' history
        self.tally: dict[str, np.ndarray] = {}  # a learning player's wins, draws, losses since the last take
        self.games: dict[str, int] = {}  # a learning player's games since the last take (N - 1 results each)
        self.opponents: dict[str, dict[str, int]] = {}  # a learning player's opponents since the last take
        self.closed = False

    # --- what the league does between slices -----------------------------------------------------
    def publish(self, policy_id: str, tensors: Mapping[str, torch.Tensor]) -> int:
        """Put ``policy_id``'s weights in the pool; returns their version."""
        data = _bytes(tensors)
        with self.lock:
            return self._publish(policy_id, data)

    def _publish(self, policy_id: str, data: bytes) -> int:  # with the lock held
        version = self.pool.get(policy_id, (0, b""))[0] + 1
        self.pool[policy_id] = (version, data)
        self.published.notify_all()
        return version

    def close(self) -> None:
        """Calls still waiting for a player's first weights end (the league is stopping)."""
        with self.lock:
            self.closed = True
            self.published.notify_all()

    def add_player(self, player_id: str, kind: str, steps: int = 0) -> None:
        with self.lock:
            self.matchmaker.add(player_id, kind)
            self.ratings.add(player_id, steps)
            self.steps[player_id] = steps

    def add_fixed(self, player_id: str) -> None:
        """A scripted player (``envs/opponents.py``'s ``random``, ``minimax``, or ``module:function``): the games
        build it themselves, by its name; nothing of it is in the pool."""
        with self.lock:
            self.matchmaker.add_fixed(player_id)
            self.ratings.add(player_id)

    def snapshot_due(self, player_id: str) -> bool:
        with self.lock:
            return self.matchmaker.ready_to_snapshot(player_id, self.steps[player_id])

    def snapshot(self, player_id: str, tensors: Mapping[str, torch.Tensor], keep=None) -> tuple[str, bool]:
        """Freeze a learning player's weights into the league; (the snapshot's id, reset the player?).
        ``keep(id)`` saves them first (the pool's file): a snapshot the league holds always has its file, and no
        game is sent to it before its weights are in the pool."""
        data = _bytes(tensors)
        with self.lock:
            if keep is not None:
                keep(self.matchmaker.next_snapshot_id(player_id))
            frozen, reset = self.matchmaker.snapshot(player_id, self.steps[player_id])
            self.ratings.add(frozen, self.steps[player_id], like=player_id)
            self._publish(frozen, data)
        return frozen, reset

    def take(self, player_id: str) -> tuple[int, np.ndarray, dict[str, int]]:
        """The player's games, its (wins, draws, losses) against the opponents of every seat of those games, and
        those opponents (with how many seats each filled), since the last take."""
        with self.lock:
            tally = self.tally.pop(player_id, np.zeros(3, np.int64))
            return self.games.pop(player_id, 0), tally, self.opponents.pop(player_id, {})

    # --- the requests ----------------------------------------------------------------------------
    def answer(self, request: bytes) -> bytes:
        """The reply to one request; ValueError (one line) for a request that is not one."""
        if len(request) > REQUEST_BYTES:
            raise ValueError(f"a request is at most {REQUEST_BYTES} bytes")
        try:
            message = json.loads(request.decode())
        except (UnicodeDecodeError, ValueError, RecursionError):
            raise ValueError("a request is one JSON object") from None
        if not isinstance(message, dict) or message.get("op") not in ("hello", "next", "pull"):
            raise ValueError('a request is a JSON object whose "op" is hello, next or pull')
        if message["op"] == "hello":
            return json.dumps(self.recipe).encode()
        if message["op"] == "pull":
            return self._pull(message.get("id"))
        return json.dumps(self._next(message.get("player"), message.get("last"), message.get("seats", 1))).encode()

    def _pull(self, policy_id) -> bytes:
        with self.lock:
            if not isinstance(policy_id, str) or policy_id not in self.pool:
                raise ValueError(f"no policy {str(policy_id)[:80]!r} in the league's pool")
            version, data = self.pool[policy_id]
        return json.dumps({"id": policy_id, "version": version}).encode() + b"\n" + data

    def _next(self, player, last, seats) -> dict:
        with self.lock:
            if not isinstance(player, str) or player not in self.steps:
                raise ValueError(f"{str(player)[:80]!r} is not a learning player of this league")
            if isinstance(seats, bool) or not isinstance(seats, int) or not 1 <= seats <= MAX_SEATS:
                raise ValueError(f'"seats" is the number of opponents the game needs, 1 to {MAX_SEATS}')
            if last is not None and (not isinstance(last, list) or not 1 <= len(last) <= MAX_SEATS or not all(
                    isinstance(r, dict) and set(r) == {"opponent", "result"} and r["result"] in OUTCOMES
                    and isinstance(r["opponent"], str) and r["opponent"] in self.matchmaker.players for r in last)):
                raise ValueError('"last" is null or a list of {"opponent": a player of the league, "result": win, '
                                 f"draw or loss}}, one per seat (at most {MAX_SEATS})")
            # a player's first weights reach the pool as its learner is built, which may be while its envs reset
            there = self.published.wait_for(lambda: player in self.pool or self.closed, FIRST_WEIGHTS_TIMEOUT_S)
            if not there or self.closed:
                raise ValueError(f"{player}'s weights did not reach the league's pool in {FIRST_WEIGHTS_TIMEOUT_S} s"
                                 if not self.closed else "the league is stopping")
            for result in last or ():
                self._record(player, result["opponent"], result["result"])
            if last:
                self.games[player] = self.games.get(player, 0) + 1
            return {"opponents": [self._choose(player) for _ in range(seats)]}

    def _choose(self, player: str) -> dict:
        """One seat's opponent: each seat of a game of more than two players is drawn on its own."""
        opponent = self.matchmaker.opponent(player)
        if self.matchmaker.players[opponent].kind == "fixed":
            return {"opponent": opponent, "version": 0, "fixed": True}
        if opponent not in self.pool:  # a player not started yet: until it is, its games are self-play
            opponent = player
        return {"opponent": opponent, "version": self.pool[opponent][0]}

    def _record(self, home: str, away: str, result: str) -> None:
        self.tally.setdefault(home, np.zeros(3, np.int64))[OUTCOMES.index(result)] += 1
        seen = self.opponents.setdefault(home, {})
        seen[away] = seen.get(away, 0) + 1
        if home != away:  # a player against its own latest weights moves no win rate and no rating
            self.matchmaker.payoff.record(home, away, result)
            self.ratings.record(home, away, result, self.steps[home])
