"""A league player's opponent, inside its game env (``pettingzoo:GAME?league=DIR&player=ID``).

At each episode's start the env tells it how the episode before ended against each other seat; it sends that to the
coordinator with the request for the next opponents, one per other seat (one call per episode, through the handle the
league gave this process under the league's folder: ``core/shared.py``), and plays each seat's opponent's policy
there: a frozen snapshot or a learning player's latest weights, pulled from the pool once per process and version
and kept (``Pool``), or a fixed player the league holds (random play, ``module:function``), built here by its name. An
actor-critic policy plays as it was trained, sampling its masked distribution; a Q-network greedily, a recurrent one
(R2D2's) from a state of this game's own, started anew with each episode and carried over its own turns only, as
the player's did when it learned: the processes' games share each policy's weights, never a game's state.
"""

from __future__ import annotations

import json
import os
from collections import OrderedDict

import numpy as np
import torch
from safetensors.torch import load

from distrl.core import shared

KEPT_POLICIES = 32  # per process and league, the least recently played dropped first


class Pool:
    """The policies one process has pulled from a league, built from the league's recipe."""

    _open: dict[str, Pool] = {}

    def __init__(self, handle):
        self.handle = handle
        self.recipe = json.loads(self.request({"op": "hello"}))
        self.models: OrderedDict[str, tuple[int, torch.nn.Module]] = OrderedDict()
        self.scripted: dict = {}

    @classmethod
    def of(cls, league_dir: str) -> Pool:
        handle = shared.handle(league_dir)
        if league_dir not in cls._open or cls._open[league_dir].handle is not handle:  # a league started anew
            cls._open[league_dir] = cls(handle)
        return cls._open[league_dir]

    @classmethod
    def drop(cls, league_dir: str) -> None:
        cls._open.pop(league_dir, None)

    def request(self, message: dict) -> bytes:
        return self.handle.request(json.dumps(message).encode())

    def _build(self) -> torch.nn.Module:
        from distrl.api import resolve_configs
        from distrl.envs import env_spec

        game = self.recipe["game"]
        module, _, sys_cfg = resolve_configs(self.recipe["system"], {**self.recipe["settings"], "env": game})
        return module.make_model(env_spec(game), sys_cfg).eval()

    def fixed(self, name: str):
        """A scripted player, built here by its name (once per process)."""
        if name not in self.scripted:
            from distrl.envs.opponents import opponent

            # a stream per process: every actor's random player its own moves
            self.scripted[name] = opponent(name, self.recipe["game"], seed=os.getpid() * 64 + len(self.scripted))
        return self.scripted[name]

    def policy(self, policy_id: str, version: int) -> torch.nn.Module:
        kept = self.models.pop(policy_id, None)
        if kept is None or kept[0] != version:
            header, _, data = self.request({"op": "pull", "id": policy_id}).partition(b"\n")
            model = kept[1] if kept is not None else self._build()
            model.load_state_dict(load(data))
            kept = (int(json.loads(header)["version"]), model)
        self.models[policy_id] = kept
        while len(self.models) > KEPT_POLICIES:
            self.models.popitem(last=False)
        return kept[1]


class _Seat:
    """One seat's opponent for an episode: a pool policy (and a recurrent one's state for this game) or a fixed
    player."""

    def __init__(self, policy_id: str, model: torch.nn.Module | None, fixed=None):
        self.id, self.model, self.fixed, self.state = policy_id, model, fixed, None

    def act(self, observation: np.ndarray, mask: np.ndarray) -> int:
        if self.model is None:
            return int(self.fixed(observation, mask))
        from distrl.models.actor_critic import ActorCritic
        from distrl.models.recurrent_q import RecurrentQNetwork

        x = torch.as_tensor(np.concatenate([observation, mask]).astype(np.float32)).unsqueeze(0)
        with torch.inference_mode():
            if isinstance(self.model, RecurrentQNetwork):
                q, self.state = self.model.step(x, self.state if self.state is not None else
                                                self.model.initial_state(1))
                action = q.argmax(dim=-1)
            else:
                action = self.model.act(x)[0] if isinstance(self.model, ActorCritic) else self.model.greedy(x)
        return int(action[0])


class LeagueOpponent:
    """Every other seat of a league player's game, each an opponent of its own that the coordinator chose for the
    episode (in a game of two players, the one other seat)."""

    def __init__(self, league: str, player: str):
        self.league, self.player = league, player
        self.seats: dict[str, _Seat] = {}

    def game_starts(self, others: list[str], outcomes: dict[str, str] | None) -> None:
        """Report the episode before (the player's result against each seat's opponent) and take this one's."""
        pool = Pool.of(self.league)
        last = None if outcomes is None else [{"opponent": self.seats[a].id, "result": r}
                                               for a, r in outcomes.items() if a in self.seats]
        chosen = json.loads(pool.request({"op": "next", "player": self.player, "last": last or None,
                                          "seats": len(others)}))["opponents"]
        self.seats = {agent: _Seat(c["opponent"], None, pool.fixed(c["opponent"])) if c.get("fixed") else
                      _Seat(c["opponent"], pool.policy(c["opponent"], int(c["version"])))
                      for agent, c in zip(others, chosen)}

    @property
    def versus_fixed(self) -> bool:
        """Every other seat's opponent this episode is one of the league's fixed players (its games are the ones a
        player's second Q head learns from: Ape-X DQN's ``fixed_head_slack``)."""
        return bool(self.seats) and all(seat.model is None for seat in self.seats.values())

    def game_restarts(self) -> None:
        """The env drew its opening again: a recurrent opponent's memory of the discarded one goes."""
        for seat in self.seats.values():
            seat.state = None

    def play_seat(self, agent: str, observation: np.ndarray, mask: np.ndarray) -> int:
        return self.seats[agent].act(observation, mask)
