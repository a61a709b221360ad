"""A league's learning players and where they run.

A player is one ordinary run (a :class:`~distrl.runtime.Trainer` with its run dir under ``LEAGUE/players/ID``) that
trains in slices; after each it reports its env steps and its acting model's weights, which the league publishes to
the pool. Its initial state (weights and optimizer statistics) is kept in ``initial.pt`` for the exploiters' resets.

- :class:`LocalPlayers` (``local``): every player in this process, one slice at a time in turn, each on its own
  runtime (``local``: its actor processes have the machine during its slice; ``inline``).
- :class:`RayPlayers` (``ray``): every player a Ray actor with one CPU, spread over the cluster's nodes (``SPREAD``)
  and running its system inline, all training at once; their games reach the coordinator by its address.
"""

from __future__ import annotations

import threading
from pathlib import Path

import torch

from distrl.pbt.members import config_error_inside, node_id


class Player:
    """One learning player: ``make()`` gives its trainer, not started; ``publish(model)``, if given, puts the
    player's weights in the pool as soon as its learner is built in :meth:`start`, before any of its games can
    start (elsewhere, :meth:`first_model` gives them then: on Ray it runs beside a ``start`` under way)."""

    def __init__(self, make, folder: str, publish=None):
        self.trainer = trainer = make()
        self.folder, self.closed = Path(folder), False
        self._built, self._first = threading.Event(), None
        ready = trainer.on_ready

        def on_ready() -> None:  # the learner is built (and a checkpoint loaded): its weights exist now
            ready()
            state = trainer.state()
            if not (self.folder / "initial.pt").is_file():
                torch.save(state, self.folder / "initial.pt")
            self._first = state["modules"]["model"]
            if publish is not None:
                publish(self._first)
            self._built.set()

        trainer.on_ready = on_ready

    def start(self) -> None:
        try:
            self.trainer.start()
        finally:  # a start that failed before the learner was built: nobody waits for its weights
            self._built.set()
        self.initial = torch.load(self.folder / "initial.pt", weights_only=True)

    def first_model(self, timeout_s: float = 600.0) -> dict | None:
        """The weights the learner started with, once it is built (None if it was not within ``timeout_s``)."""
        return self._first if self._built.wait(timeout_s) else None

    def model(self) -> dict:
        return self.trainer.state()["modules"]["model"]

    def step(self, env_steps: int) -> dict:
        self.trainer.step(env_steps=env_steps)
        return {"env_steps": self.trainer.env_steps, "done": self.trainer.done, "model": self.model(),
                "node": node_id()}

    def reset(self) -> dict:
        """Back to the initial weights and optimizer statistics (an exploiter after its snapshot)."""
        self.trainer.load_state(self.initial)
        return self.model()

    def close(self) -> dict | None:
        if self.closed:
            return None
        self.closed = True
        return self.trainer.close()


class LocalPlayers:
    def __init__(self, makers: dict, folders: dict, publish):
        self.players: dict[str, Player] = {}
        try:
            for pid, make in makers.items():
                self.players[pid] = Player(make, folders[pid], lambda model, pid=pid: publish(pid, model))
                self.players[pid].start()
        except BaseException:
            self.close()
            raise
        self.queue: list[tuple[str, int]] = []

    def model(self, pid: str) -> dict:
        return self.players[pid].model()

    def submit(self, pid: str, env_steps: int) -> None:
        self.queue.append((pid, env_steps))

    def pending(self) -> bool:
        return bool(self.queue)

    def wait_any(self) -> tuple[str, dict]:
        pid, n = self.queue.pop(0)
        return pid, self.players[pid].step(n)

    def reset(self, pid: str) -> dict:
        return self.players[pid].reset()

    def close(self) -> None:
        for player in self.players.values():
            try:
                player.close()  # its checkpoint and summary
            except Exception:
                pass


class RayPlayers:
    def __init__(self, makers: dict, folders: dict, publish):
        import ray

        self.ray = ray
        actor = ray.remote(num_cpus=1, max_restarts=0, max_concurrency=2, scheduling_strategy="SPREAD")(Player)
        self.players = {pid: actor.remote(make, folders[pid]) for pid, make in makers.items()}
        self.running: dict = {}
        try:
            starting = [p.start.remote() for p in self.players.values()]
            for pid, p in self.players.items():  # each learner's first weights, while its start waits for them
                first = ray.get(p.first_model.remote())
                if first is not None:
                    publish(pid, first)
            ray.get(starting)
        except ray.exceptions.RayError as e:  # a player's constructor or start failed: say why in one line
            self.close()
            line = config_error_inside(e)
            if line is not None:
                raise line from None
            raise

    def model(self, pid: str) -> dict:
        return self.ray.get(self.players[pid].model.remote())

    def submit(self, pid: str, env_steps: int) -> None:
        self.running[self.players[pid].step.remote(env_steps)] = pid

    def pending(self) -> bool:
        return bool(self.running)

    def wait_any(self) -> tuple[str, dict]:
        [ref], _ = self.ray.wait(list(self.running), num_returns=1)
        return self.running.pop(ref), self.ray.get(ref)

    def reset(self, pid: str) -> dict:
        return self.ray.get(self.players[pid].reset.remote())

    def close(self) -> None:
        closing = {pid: p.close.remote() for pid, p in self.players.items()}  # each ends its step under way first
        for pid, ref in closing.items():
            try:
                self.ray.get(ref, timeout=300)
            except Exception:
                pass
            try:
                self.ray.kill(self.players[pid], no_restart=True)
            except Exception:
                pass
