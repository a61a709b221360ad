"""A league's learning players and where they run.

A player is one ordinary run (a :class:`~distrl.runtime.Trainer` with its run dir under ``LEAGUE/players/ID``) that
trains in slices; after each it reports its env steps and its acting model's weights, which the league publishes to
the pool. Its initial state (weights and optimizer statistics) is kept in ``initial.pt`` for the exploiters' resets.

Both are pools of :mod:`distrl.runtime.backends.pools`, shared with PBT's members:

- :class:`LocalPlayers` (``local``): every player in this process, one slice at a time in turn, each on its own
  runtime (``local``: its actor processes have the machine during its slice; ``inline``).
- :class:`RayPlayers` (``ray``): every player a Ray actor with one CPU, spread over the cluster's nodes (``SPREAD``)
  and running its system inline, all training at once; their games reach the coordinator by its address.
"""

from __future__ import annotations

import os
from functools import partial
from pathlib import Path

import torch

from distrl.runtime.backends.pools import FirstModel, LocalTrainers, RayTrainers, node_id


class Player:
    """One learning player: ``make()`` gives its trainer, not started; ``publish(model)``, if given, puts the
    player's weights in the pool as soon as its learner is built in :meth:`start`, before any of its games can
    start (elsewhere, :meth:`first_model` gives them then: on Ray it runs beside a ``start`` under way)."""

    def __init__(self, make, folder: str, publish=None):
        self.trainer = make()
        self.folder, self.closed = Path(folder), False

        def keep(state) -> None:  # the initial weights and optimizer statistics, for an exploiter's resets
            path = self.folder / "initial.pt"
            if not path.is_file():  # whole or absent: a start stopped while it was written leaves no torn file
                for stale in self.folder.glob(".initial.pt.*"):  # (a start killed while it wrote one)
                    stale.unlink(missing_ok=True)
                partial_ = path.with_name(f".initial.pt.{os.getpid()}")
                torch.save(state, partial_)
                os.replace(partial_, path)

        self.first = FirstModel(self.trainer, publish, keep)

    def start(self) -> None:
        try:
            self.trainer.start()
        finally:
            self.first.start_ended()
        self.initial = torch.load(self.folder / "initial.pt", weights_only=True)

    def first_model(self, timeout_s: float = 600.0) -> dict | None:
        """The weights the learner started with, once it is built (None if it was not within ``timeout_s``)."""
        return self.first.wait(timeout_s)

    def model(self) -> dict:
        return self.trainer.state()["modules"]["model"]

    def step(self, env_steps: int) -> dict:
        self.trainer.step(env_steps=env_steps)
        return {"env_steps": self.trainer.env_steps, "done": self.trainer.done, "model": self.model(),
                "node": node_id()}

    def reset(self) -> dict:
        """Back to the initial weights and optimizer statistics (an exploiter after its snapshot), checkpointed at
        once: the league's state records the reset, and a league killed before the player's next checkpoint would
        otherwise resume it from the weights it froze."""
        self.trainer.load_state(self.initial)
        self.trainer.checkpoint()
        return self.model()

    def close(self) -> dict | None:
        if self.closed:
            return None
        self.closed = True
        return self.trainer.close()


class _Players:
    """What the league asks of its pool, wherever the players run."""

    def model(self, pid: str) -> dict:
        return self.call(pid, "model")

    def reset(self, pid: str) -> dict:
        return self.call(pid, "reset")


class LocalPlayers(_Players, LocalTrainers):
    def __init__(self, makers: dict, folders: dict, publish):
        made = {pid: partial(Player, make, folders[pid], partial(publish, pid)) for pid, make in makers.items()}
        super().__init__(made, start=Player.start)


class RayPlayers(_Players, RayTrainers):
    """``again``: each player's maker for one made again after its actor died (from its last checkpoint)."""

    def __init__(self, makers: dict, folders: dict, publish, again: dict | None = None):
        super().__init__(Player, {pid: (make, folders[pid]) for pid, make in makers.items()}, publish,
                         {pid: (make, folders[pid]) for pid, make in again.items()} if again is not None else None)
