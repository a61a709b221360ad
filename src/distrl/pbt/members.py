"""Population members and where they run.

A member is one ordinary run (a :class:`~distrl.runtime.Trainer` with its own run dir, checkpoints and
metrics) that trains in slices of ``ready_steps`` env steps. After each slice it reports a score (the
mean return of the episodes it finished in that slice) and keeps a snapshot of its state in memory:
weights **and** optimizer statistics (Jaderberg et al. 2017 copy both), with a checksum. Exploit hands a
snapshot to another member, which loads it, recomputes the checksum from its own loaded tensors and
refuses a copy that differs: the copy is verified, and it never goes through files.

Pools place the members (:mod:`distrl.runtime.backends.pools`, shared with a league's players):

- :class:`LocalPool` (``local``): every member in this process, trained one slice at a time in turn.
  Each member's own runtime (``inline``, or ``local`` with its actor processes) has the whole machine
  during its slice; the others' processes wait, blocked on their pipelines. No core is shared by two
  members at once, so a population of N costs N times one run, never more through oversubscription.
- :class:`RayPool` (``ray``): every member a Ray actor with one CPU, spread over the cluster's nodes
  (``SPREAD``), trained concurrently; snapshots travel through Ray's object store straight from the
  source's node to the target's.
"""

from __future__ import annotations

import hashlib
import math
import threading
from collections.abc import Mapping
from functools import partial
from typing import Any

import torch

from distrl.runtime.backends.pools import Answer, FirstModel, LocalTrainers, RayTrainers, node_id


def state_checksum(state: Mapping[str, Any]) -> str:
    """SHA-256 over every tensor of a trainer state's models and its optimizers' statistics (not their
    param groups: the learning rate there follows the member's own schedule), in a fixed order."""
    h = hashlib.sha256()
    for name in sorted(state["modules"]):
        h.update(name.encode())
        _feed(h, state["modules"][name])
    for name in sorted(state["optimizers"]):
        h.update(name.encode())
        _feed(h, state["optimizers"][name].get("state", {}))
    return h.hexdigest()


def _feed(h, value) -> None:
    if isinstance(value, torch.Tensor):
        h.update(str(value.dtype).encode() + str(tuple(value.shape)).encode())
        h.update(value.detach().cpu().contiguous().view(-1).view(torch.uint8).numpy().tobytes())
    elif isinstance(value, Mapping):
        for key in sorted(value, key=str):
            h.update(str(key).encode())
            _feed(h, value[key])
    elif isinstance(value, (list, tuple)):
        for v in value:
            _feed(h, v)
    else:
        h.update(repr(value).encode())


class TrainerMember:
    """One member: a trainer made by ``make(resume)`` (see :func:`distrl.pbt.population.member_factory`), started
    by :meth:`start`. A member of a population that plays itself (``plays=True``) reports its acting model's weights
    after each slice, and its first ones as its learner is built (``publish(model)`` here, :meth:`first_model`
    elsewhere): the other members' games play them."""

    def __init__(self, make, resume: bool, plays: bool = False, publish=None):
        self.lock = threading.Lock()  # on Ray only ``snapshot`` may run beside a step
        self.trainer = make(resume)
        self.plays = plays
        self.first = FirstModel(self.trainer, publish) if plays else None
        self._snapshot: dict | None = None
        self.closed = False

    def start(self) -> None:
        try:
            self.trainer.start()
        finally:
            if self.first is not None:
                self.first.start_ended()
        state = self.trainer.state()  # a member made again after its actor died can be copied before its next slice
        self._snapshot = {"state": state, "checksum": state_checksum(state)}

    def first_model(self, timeout_s: float = 600.0) -> dict | None:
        return self.first.wait(timeout_s) if self.first is not None else None

    def set_hyperparameters(self, values: Mapping[str, float]) -> None:
        with self.lock:
            self.trainer.set_hyperparameters(**values)

    def step(self, env_steps: int) -> dict[str, Any]:
        """Train ``env_steps`` more env steps (fewer at the budget); then score, snapshot, report."""
        with self.lock:
            return self._step(env_steps)

    def _step(self, env_steps: int) -> dict[str, Any]:
        t = self.trainer
        episodes = t.ledger.episodes
        summed_before, total_before = episodes.summed, episodes.total
        t.step(env_steps=env_steps)
        finished = episodes.summed - summed_before  # the mean over every episode the slice finished (finite returns)
        score = (episodes.total - total_before) / finished if finished > 0 else episodes.mean_return
        state = t.state()
        self._snapshot = {"state": state, "checksum": state_checksum(state)}
        report = {"score": score if math.isfinite(score) else float("-inf"), "env_steps": t.env_steps,
                  "hyperparameters": t.hyperparameters, "done": t.done, "node": node_id()}
        if self.plays:
            report["model"] = state["modules"]["model"]
        return report

    def snapshot(self) -> dict | None:
        return self._snapshot

    def load(self, snapshot: Mapping[str, Any], hyperparameters: Mapping[str, float]) -> str:
        """Take another member's snapshot, check the copy, then set the explored hyperparameters."""
        if snapshot is None:
            raise RuntimeError("exploit source has no snapshot yet")
        with self.lock:
            self.trainer.load_state(snapshot["state"])
            loaded = state_checksum(self.trainer.state())
            if loaded != snapshot["checksum"]:
                raise RuntimeError(f"exploit copy differs from its source (checksum {loaded[:12]} != "
                                   f"{snapshot['checksum'][:12]})")
            self.trainer.set_hyperparameters(**hyperparameters)
            return loaded

    def close(self) -> dict | None:
        with self.lock:  # a step under way ends first: its model and optimizer are then whole for the checkpoint
            if self.closed:
                return None
            self.closed = True
            return self.trainer.close()


class _Members:
    """What PBT asks of its pool, wherever the members run. ``publish(i, model)``: the population plays itself, and
    each slice's end puts member ``i``'s weights where the other members' games pull them."""

    workers: dict
    publish = None
    values: dict  # each member's hyperparameters as the controller last set them

    def wait_any(self) -> tuple[int, dict]:
        i, result = super().wait_any()
        model = result.pop("model", None)
        if model is not None and self.publish is not None:
            self.publish(i, model)
        return i, result

    def __len__(self) -> int:
        return len(self.workers)

    def set_hyperparameters(self, i: int, values: Mapping[str, float]) -> None:
        self.values[i] = dict(values)
        self.call(i, "set_hyperparameters", dict(values))

    def copy(self, source: int, target: int, hyperparameters: Mapping[str, float]) -> str | None:
        """The target takes the source's snapshot (the one of its last finished slice: the source may be training
        its next) and the hyperparameters; the copy's checksum. None where the source's actor died before it
        answered: the one made in its place holds its last checkpoint, not the slice that scored, so nothing is
        copied."""
        checksum = self.call(target, "load", Answer(source, "snapshot", again=False), dict(hyperparameters))
        if checksum is not None:
            self.values[target] = dict(hyperparameters)
        return checksum


class LocalPool(_Members, LocalTrainers):
    """Members in this process, one slice at a time, in the order they became ready. ``publish(i, model)``: the
    population plays itself, and member ``i``'s first weights go there as its learner is built."""

    def __init__(self, makers: list, resume: list[bool], publish=None):
        plays, self.publish, self.values = publish is not None, publish, {}
        super().__init__({i: partial(TrainerMember, make, again, plays, partial(publish, i) if plays else None)
                          for i, (make, again) in enumerate(zip(makers, resume))}, start=TrainerMember.start)


class RayPool(_Members, RayTrainers):
    """Members as Ray actors (one CPU each, spread over the nodes), trained concurrently. A member whose actor died
    is made again from its last checkpoint (or anew, if it wrote none), with the hyperparameters the controller
    last set."""

    def __init__(self, makers: list, resume: list[bool], publish=None):
        self.values, self.remade = {}, set()  # remade: members made again that have not finished a slice since
        plays = publish is not None
        first = {i: (make, again, plays) for i, (make, again) in enumerate(zip(makers, resume))}
        super().__init__(TrainerMember, first, publish, {i: (make, None, plays) for i, make in enumerate(makers)})

    def _replace(self, key: int, error: Exception) -> None:
        self.remade.add(key)
        super()._replace(key, error)
        if key in self.values:
            self.call(key, "set_hyperparameters", self.values[key])

    def wait_any(self) -> tuple[int, dict]:
        i, result = super().wait_any()
        self.remade.discard(i)  # its snapshot is of the slice it reports
        return i, result

    def copy(self, source: int, target: int, hyperparameters: Mapping[str, float]) -> str | None:
        """As :meth:`_Members.copy`; None, nothing copied, while the source was made again after its actor died and
        has not finished a slice since: its snapshot is then its last checkpoint's, not the slice that scored."""
        if source in self.remade:
            return None
        return super().copy(source, target, hyperparameters)
