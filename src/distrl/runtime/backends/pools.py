"""Where trainers that train in slices run, for PBT's members and a league's players alike.

A worker is any object with ``start()``, ``step(env_steps) -> dict`` and ``close()`` (a
:class:`~distrl.pbt.members.TrainerMember`, a :class:`~distrl.league.players.Player`), and ``first_model()`` where the
pool publishes first weights; a pool keys its workers (a member's index, a player's id) and speaks
``submit(key, env_steps)``, ``pending()``, ``wait_any() -> (key, report)`` and ``close()``, and calls any other
method of a worker with ``call(key, method, *args)`` (its result) or ``begin`` (a handle ``gather`` waits for); an
argument that is another worker's answer is an :class:`Answer`: the pool's users never learn where their workers
run.

- :class:`LocalTrainers`: every worker in this process, one slice at a time in the order submitted.
- :class:`RayTrainers`: every worker a Ray actor with one CPU, spread over the cluster's nodes (``SPREAD``), all
  training at once. A worker whose actor dies (its process killed, its node lost) is made again from its
  ``restart`` arguments (its run resumed from its last checkpoint) and given its slice again, up to
  ``MAX_RESTARTS`` times.

Where others play a worker's policy (a league's players, a population playing itself), the pool publishes each
worker's first weights as soon as its learner is built, before any game can ask for them (:class:`FirstModel`).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass

MAX_RESTARTS = 3  # per worker and session: a worker that keeps dying ends the pool's run


@dataclass(frozen=True)
class Answer:
    """An argument of a call that is another worker's answer to ``method()`` (a PBT member's snapshot): on Ray it
    goes from that worker's node straight to the call's. Where that worker's actor died before it answered, it is
    made again, and the call is made again with the new one's answer (``again``) or not made (it answers None)."""

    key: Hashable
    method: str
    again: bool = True


class FirstModel:
    """The weights ``trainer``'s learner starts with, once it is built (and a checkpoint loaded), before any of its
    components runs: ``publish(model)`` gets them then, in this process; :meth:`wait` gives them elsewhere (on Ray,
    beside a ``start`` under way). ``keep(state)`` sees the whole first state (a league's exploiter resets to it)."""

    def __init__(self, trainer, publish: Callable | None = None, keep: Callable | None = None):
        self.model, self._built = None, threading.Event()
        ready = trainer.on_ready

        def on_ready() -> None:
            ready()
            state = trainer.state()
            if keep is not None:
                keep(state)
            self.model = state["modules"]["model"]
            if publish is not None:
                publish(self.model)
            self._built.set()

        trainer.on_ready = on_ready

    def start_ended(self) -> None:
        """The start is over (the learner built, or the start failed before it was): nobody waits longer."""
        self._built.set()

    def wait(self, timeout_s: float = 600.0) -> dict | None:
        return self.model if self._built.wait(timeout_s) else None


class LocalTrainers:
    """Workers made by ``makers`` (key -> ``make()``) in this process, each then started by ``start(worker)`` if
    given; one that fails to be made or started closes those made before."""

    def __init__(self, makers: Mapping[Hashable, Callable], start: Callable | None = None):
        self.workers: dict = {}
        try:
            for key, make in makers.items():
                worker = self.workers[key] = make()
                if start is not None:
                    start(worker)
        except BaseException:
            self.close()
            raise
        self.queue: list[tuple[Hashable, int]] = []

    def call(self, key: Hashable, method: str, *args):
        args = [self.call(a.key, a.method) if isinstance(a, Answer) else a for a in args]
        return getattr(self.workers[key], method)(*args)

    def begin(self, key: Hashable, method: str, *args):
        return self.call(key, method, *args)  # in this process: done at once, the result its own handle

    def gather(self, handles: list) -> list:
        return handles

    def submit(self, key: Hashable, env_steps: int) -> None:
        self.queue.append((key, env_steps))

    def pending(self) -> bool:
        return bool(self.queue)

    def wait_any(self) -> tuple[Hashable, dict]:
        key, n = self.queue.pop(0)
        return key, self.workers[key].step(n)

    def close(self) -> list[dict | None]:
        """Each worker's close (its checkpoint and summary), None for one that failed, in the workers' order."""
        summaries = []
        for worker in self.workers.values():
            try:
                summaries.append(worker.close())
            except Exception:
                summaries.append(None)
        return summaries


class RayTrainers:
    """Workers of class ``cls`` as Ray actors (one CPU each, spread over the nodes), ``args`` key -> constructor
    arguments, trained concurrently. :meth:`started` waits until they are up; a constructor or start that failed
    closes them all and raises its ConfigError as one line. ``publish(key, model)``, if given, gets each worker's
    first weights (its ``first_model()``) while its start goes on. ``restart`` (key -> constructor arguments) makes
    a worker again in place of one whose actor died; without it, a dead actor ends the run."""

    def __init__(self, cls: type, args: Mapping[Hashable, tuple], publish: Callable | None = None,
                 restart: Mapping[Hashable, tuple] | None = None):
        import ray

        self.ray, self.publish, self.restart = ray, publish, restart
        self.actor = ray.remote(num_cpus=1, max_concurrency=2, max_restarts=0, scheduling_strategy="SPREAD")(cls)
        self.workers = {key: self.actor.remote(*a) for key, a in args.items()}
        self.running: dict = {}  # step call -> (key, env steps asked)
        self.restarts = dict.fromkeys(self.workers, 0)
        try:
            self.started(list(self.workers))
        except ray.exceptions.RayError as e:  # say why in one line
            self.close()
            line = config_error_inside(e)
            if line is not None:
                raise line from None
            raise

    def started(self, keys: list) -> None:
        """Start the workers of ``keys`` (their ``start()``) and wait until all are up."""
        starting = [self.begin(key, "start") for key in keys]
        if self.publish is not None:
            for key in keys:  # each learner's first weights, while its start waits for them
                first = self.ray.get(self.begin(key, "first_model"))
                if first is not None:
                    self.publish(key, first)
        self.gather(starting)

    def call(self, key: Hashable, method: str, *args):
        """The worker's answer. Where an actor of the pool died meanwhile (the worker's, as a reset asked of a player
        killed meanwhile, or the one an :class:`Answer` argument comes from), it is made again where it may be and
        the call is made again; None where the dead one was an answer's whose ``again`` is False."""
        while True:  # ends: each turn answers, raises, or spends one of a worker's MAX_RESTARTS
            actors = dict(self.workers)
            try:
                return self.ray.get(self.begin(key, method, *args))
            except self.ray.exceptions.RayActorError as e:
                dead = self._dead(e, actors, key)
                if dead is None:
                    raise
                self._make_again(dead, actors[dead], e)
                if any(isinstance(a, Answer) and a.key == dead and not a.again for a in args):
                    return None

    def begin(self, key: Hashable, method: str, *args):
        """An object reference: Ray hands its value to a call that takes it as an argument, on its own node."""
        args = [self.begin(a.key, a.method) if isinstance(a, Answer) else a for a in args]
        return getattr(self.workers[key], method).remote(*args)

    def gather(self, handles: list) -> list:
        return self.ray.get(handles)

    def submit(self, key: Hashable, env_steps: int) -> None:
        self.running[self.begin(key, "step", env_steps)] = (key, env_steps, self.workers[key])

    def pending(self) -> bool:
        return bool(self.running)

    def wait_any(self) -> tuple[Hashable, dict]:
        while True:
            [ref], _ = self.ray.wait(list(self.running), num_returns=1)
            key, env_steps, actor = self.running.pop(ref)
            try:
                return key, self.ray.get(ref)
            except self.ray.exceptions.RayActorError as e:  # its process or node is gone (a step that raised is not)
                if self._dead(e, {**self.workers, key: actor}, key) != key:
                    raise  # an actor outside the pool died under the worker's step: the step's own error
                self._make_again(key, actor, e)
                self.submit(key, env_steps)

    def _dead(self, error, actors: Mapping, key: Hashable) -> Hashable | None:
        """The key of the pool's actor whose death ``error`` reports (Ray names it by id); ``key`` where Ray knew no
        id of an actor that died under the call; None where the actor that died is none of the pool's (one a worker
        holds a handle to, whose death its task raised): not the pool's to make again."""
        dead = getattr(error, "actor_id", None)
        if dead is None:  # Ray had no data on it: an error raised inside a task is the task's, else the worker died
            return None if isinstance(error, self.ray.exceptions.RayTaskError) else key
        return next((k for k, actor in actors.items() if actor._actor_id.hex() == dead), None)

    def _make_again(self, key: Hashable, actor, error: Exception) -> None:
        """Make worker ``key`` again in place of ``actor``, which died: unless it was already (by another call that
        found it dead), and within its MAX_RESTARTS (else ``error`` ends the run)."""
        if self.workers[key] is not actor:
            return
        if self.restart is None or self.restarts[key] >= MAX_RESTARTS:
            raise error
        self._replace(key, error)

    def _replace(self, key: Hashable, error: Exception) -> None:
        while True:  # a worker that dies again while it starts is made again, within its MAX_RESTARTS
            self.restarts[key] += 1
            reason = str(error).strip().splitlines()[0][:160] if str(error).strip() else type(error).__name__
            print(f"distrl: {key}'s Ray actor died ({reason}); made again, from its last checkpoint if it wrote one "
                  f"(restart {self.restarts[key]} of {MAX_RESTARTS})", file=sys.stderr, flush=True)
            try:
                self.ray.kill(self.workers[key], no_restart=True)
            except Exception:
                pass
            self.workers[key] = self.actor.remote(*self.restart[key])
            try:
                self.started([key])
                return
            except self.ray.exceptions.RayActorError as e:
                if self._dead(e, {key: self.workers[key]}, key) != key or self.restarts[key] >= MAX_RESTARTS:
                    raise
                error = e

    def close(self) -> list[dict | None]:
        """As :meth:`LocalTrainers.close`; then each actor is ended."""
        closing = [w.close.remote() for w in self.workers.values()]  # all at once: each ends its step under way first
        summaries = []
        for w, ref in zip(self.workers.values(), closing):
            try:
                summaries.append(self.ray.get(ref, timeout=300))
            except Exception:
                summaries.append(None)
            try:
                self.ray.kill(w, no_restart=True)
            except Exception:
                pass
        return summaries


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
