"""Population members and where they run.

A member is one ordinary run (a :class:`~distrl.runtime.Trainer` with its own run dir, checkpoints and
metrics) that trains in slices of ``ready_steps`` env steps. After each slice it reports a score (the
mean return of the episodes it finished in that slice) and keeps a snapshot of its state in memory:
weights **and** optimizer statistics (Jaderberg et al. 2017 copy both), with a checksum. Exploit hands a
snapshot to another member, which loads it, recomputes the checksum from its own loaded tensors and
refuses a copy that differs: the copy is verified, and it never goes through files.

Pools place the members:

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
from typing import Any

import numpy as np
import torch


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
    """One member: a trainer made by ``make(resume)`` (see :func:`distrl.pbt.population.member_factory`)."""

    def __init__(self, make, resume: bool):
        self.lock = threading.Lock()  # on Ray only ``snapshot`` may run beside a step
        self.trainer = make(resume)
        self.trainer.start()
        self._snapshot: dict | None = None
        self.closed = False

    def ready(self) -> bool:
        return True

    def set_hyperparameters(self, values: Mapping[str, float]) -> None:
        with self.lock:
            self.trainer.set_hyperparameters(**values)

    def step(self, env_steps: int) -> dict[str, Any]:
        """Train ``env_steps`` more env steps (fewer at the budget); then score, snapshot, report."""
        with self.lock:
            return self._step(env_steps)

    def _step(self, env_steps: int) -> dict[str, Any]:
        t = self.trainer
        episodes_before = t.ledger.episodes.count
        t.step(env_steps=env_steps)
        finished = min(t.ledger.episodes.count - episodes_before, len(t.ledger.episodes.returns))
        recent = list(t.ledger.episodes.returns)[-finished:] if finished > 0 else []
        score = float(np.mean(recent)) if recent else t.ledger.episodes.mean_return
        state = t.state()
        self._snapshot = {"state": state, "checksum": state_checksum(state)}
        return {"score": score if math.isfinite(score) else float("-inf"), "env_steps": t.env_steps,
                "hyperparameters": t.hyperparameters, "done": t.done, "node": node_id()}

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


def config_error_inside(error) -> Exception | None:
    """The ConfigError a Ray actor's constructor raised, inside Ray's error (to say it in one line), or None."""
    from distrl.errors import ConfigError

    cause = getattr(error, "cause", None) or getattr(getattr(error, "error", None), "cause", None)
    return ConfigError(str(cause)) if isinstance(cause, ConfigError) else None


def node_id() -> str:
    """The Ray node this process runs on, or ``local``."""
    try:
        import ray

        if ray.is_initialized():
            return ray.get_runtime_context().get_node_id()
    except ImportError:
        pass
    return "local"


class LocalPool:
    """Members in this process, one slice at a time, in the order they became ready."""

    def __init__(self, makers: list, resume: list[bool]):
        self.members: list[TrainerMember] = []
        try:
            for make, again in zip(makers, resume):
                self.members.append(TrainerMember(make, again))
        except BaseException:
            self.close()
            raise
        self.queue: list[tuple[int, int]] = []

    def __len__(self) -> int:
        return len(self.members)

    def set_hyperparameters(self, i: int, values: Mapping[str, float]) -> None:
        self.members[i].set_hyperparameters(values)

    def submit(self, i: int, env_steps: int) -> None:
        self.queue.append((i, env_steps))

    def pending(self) -> bool:
        return bool(self.queue)

    def wait_any(self) -> tuple[int, dict]:
        i, n = self.queue.pop(0)
        return i, self.members[i].step(n)

    def copy(self, source: int, target: int, hyperparameters: Mapping[str, float]) -> str:
        return self.members[target].load(self.members[source].snapshot(), hyperparameters)

    def close(self) -> list[dict | None]:
        summaries = []
        for m in self.members:
            try:
                summaries.append(m.close())
            except Exception:
                summaries.append(None)
        return summaries


class RayPool:
    """Members as Ray actors (one CPU each, spread over the nodes), trained concurrently."""

    def __init__(self, makers: list, resume: list[bool]):
        import ray

        self.ray = ray
        actor = ray.remote(num_cpus=1, max_concurrency=2, max_restarts=0, scheduling_strategy="SPREAD")(TrainerMember)
        self.members = [actor.remote(make, again) for make, again in zip(makers, resume)]
        self.running: dict = {}
        try:
            ray.get([m.ready.remote() for m in self.members])
        except ray.exceptions.RayError as e:  # a member's constructor failed: say why in one line
            self.close()
            line = config_error_inside(e)
            if line is not None:
                raise line from None
            raise

    def __len__(self) -> int:
        return len(self.members)

    def set_hyperparameters(self, i: int, values: Mapping[str, float]) -> None:
        self.ray.get(self.members[i].set_hyperparameters.remote(dict(values)))

    def submit(self, i: int, env_steps: int) -> None:
        self.running[self.members[i].step.remote(env_steps)] = i

    def pending(self) -> bool:
        return bool(self.running)

    def wait_any(self) -> tuple[int, dict]:
        [ref], _ = self.ray.wait(list(self.running), num_returns=1)
        return self.running.pop(ref), self.ray.get(ref)

    def copy(self, source: int, target: int, hyperparameters: Mapping[str, float]) -> str:
        # the source may be training its next slice: its snapshot is the one of its last finished slice
        return self.ray.get(
            self.members[target].load.remote(self.members[source].snapshot.remote(), dict(hyperparameters))
        )

    def close(self) -> list[dict | None]:
        closing = [m.close.remote() for m in self.members]  # all at once: each waits for its step under way
        summaries = []
        for m, ref in zip(self.members, closing):
            try:
                summaries.append(self.ray.get(ref, timeout=300))
            except Exception:
                summaries.append(None)
            try:
                self.ray.kill(m, no_restart=True)
            except Exception:
                pass
        return summaries
