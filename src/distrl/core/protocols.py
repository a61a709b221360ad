"""What components promise the runtime, and what the runtime's service handles promise components.

Components are plain classes: the runtime calls only the methods declared here and never looks
inside, so the same component runs in one process, in many processes over shared memory, or on Ray.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

import numpy as np


class Component(Protocol):
    """A worker of some role (actor, bundle, env actor, evaluator)."""

    def step(self, out: dict[str, np.ndarray] | None) -> dict[str, Any]:
        """One unit of work. Fill ``out`` (the role's output, if it emits) and return small info:
        ``env_steps``, ``version`` (the weights that acted), ``episode_returns``, ``episode_lengths``,
        ``env_s``, ``infer_s``; any other number becomes a metrics column (``actor_<key>``)."""

    def set_hyperparameters(self, values: Mapping[str, float]) -> None:
        """Values the run changed (e.g. exploration); a component ignores names it does not use."""

    def close(self) -> None: ...


class PolicyScorer(Component, Protocol):
    """A component of a role with ``scores_weights`` (the evaluator): plays given weights as it plays the newest."""

    def score(self, weights: np.ndarray) -> dict[str, float]:
        """``eval_return_mean``, ``eval_return_std`` and ``eval_episodes`` of ``weights`` (flat, as it sends them)."""


class Learner(Protocol):
    """Turns batches into updates, in the trainer's process."""

    version: int  # one more per gradient update

    def step(self, batch: dict[str, np.ndarray] | None) -> dict[str, float] | None:
        """Learn from ``batch`` (from the consumed channel), or from the learner's own replays when the
        program consumes no channel; ``None`` when there was nothing to learn from yet."""

    def get_weights(self) -> np.ndarray: ...

    def checkpoint_parts(self) -> tuple[dict, dict]:
        """(modules, optimizers) to save and load by name."""

    def counters(self) -> dict: ...

    def load_counters(self, counters: dict) -> None: ...

    def set_hyperparameters(self, values: Mapping[str, float]) -> None: ...


class DeviceLearner(Learner, Protocol):
    """A learner the runtime may place on a device and run beside others (``agents/common/on_device.OnDevice``):
    what the trainer calls for ``device``, ``precision``, ``overlap_transfers`` and ``num_learners``."""

    def place(self, device, precision: str = "fp32") -> None:
        """Move its networks to ``device`` (before a checkpoint loads); ``bf16``: their layers under autocast."""

    def combine_over(self, reducer) -> None:
        """Data-parallel learners: combine gradients and batch statistics with the others through ``reducer``."""

    def stage(self, arrays: Mapping[str, np.ndarray]):
        """Send a batch to its device ahead of its update (the trainer's staging thread)."""

    def prefetch(self, on: bool) -> None:
        """A learner that samples its own replays draws its next batch ahead (``overlap_transfers=on``)."""

    def device_weights(self):
        """Its flat weights as a tensor still on its device (a publish that does not wait for the copy)."""


class WeightsReader(Protocol):
    """A reader's handle on the :class:`~distrl.core.program.Weights` service."""

    bytes: int  # weights pulled so far: the runtime's bytes moved per env step sums it

    def pull(self, newer_than: int) -> tuple[np.ndarray, int] | None:
        """The newest weights and their version, or ``None`` if they are not newer than ``newer_than``."""


class ParamServerHandle(Protocol):
    """A worker's handle on the :class:`~distrl.core.program.ParamServer` service."""

    travels: bool  # True where an exchange is a round trip between processes, worth batching gradients into
    bytes: int  # moved so far: weights read and shards written (gradients sent where they travel)

    def pull(self, model) -> np.ndarray:
        """Copy the latest parameters into ``model``; return each shard's version."""

    def push(self, model, versions: np.ndarray) -> tuple[int, int, float]:
        """Apply ``model``'s gradients; return (shards applied, shards dropped as stale, mean staleness)."""

    def exchange(self, model, versions: np.ndarray) -> tuple[int, int, float, np.ndarray]:
        """A push whose reply brings the latest parameters back into ``model`` (one round trip)."""

    def send_many(self, model, grads: list, versions: np.ndarray) -> Callable[[], tuple[int, int, float, np.ndarray]]:
        """Send several gradients (each a list over ``model``'s parameters) computed from the parameters of
        ``versions``, applied in turn in one round trip. The returned function waits for the reply, loads
        the latest parameters into ``model`` and returns (shards applied, dropped, mean staleness, versions);
        in between ``model`` is the caller's to use (not to train)."""


class ReplayHandle(Protocol):
    """The learner's handle on a :class:`~distrl.core.program.ReplayService`."""

    size: int

    def sample(self, batch_size: int, beta: float = 0.4):
        """A :class:`~distrl.replay.SampledBatch`, or ``None`` while the rate limiter says wait."""

    def update_priorities(self, slots: np.ndarray, priorities: np.ndarray) -> None: ...

    def stats(self) -> dict[str, float]: ...


class ConstantHandle(Protocol):
    """A component's handle on a :class:`~distrl.core.program.ConstantArray` service."""

    def get(self) -> np.ndarray:
        """The array, read-only (a view of this machine's one copy)."""


class ServiceAdapter(Protocol):
    """The trainer's side of one service on one transport (``runtime/services/``): what every adapter offers. What
    only some services have is one of the smaller protocols below. The four the runtime asks of any adapter
    (state, spawned copies, per-call arguments, applied updates) an adapter declares by subclassing their bases in
    ``runtime/services/base.py`` (``Stateful``, ``OwnsSpawnedCopies``, ``SendsCallArgs``, ``AppliesUpdates``): the
    runtime checks those, never the methods. ``ChannelSource`` and ``ReplayIntake`` are what a backend calls on the
    adapters it built for an inference service and a replay service, found by the program's declarations."""

    emits: str | None  # the channel this service feeds (an inference server's unrolls), if any

    def learner_handle(self) -> Any:
        """What the learner (in the trainer's process) uses."""

    def worker_handle(self, role: str, index: int) -> Any:
        """What component ``index`` of ``role`` gets (picklable); called again for a restarted component."""

    def start(self) -> None:
        """After a checkpoint was restored into the service, before any component starts."""

    def publish(self, weights_fn, version: int) -> None:
        """The learner has new weights (``weights_fn()`` makes them, only if someone needs them)."""

    def set_hyperparameters(self, values: Mapping[str, float]) -> None: ...

    def stats(self, whole_run: bool = False) -> dict[str, Any]:
        """Numbers for the metrics row (or, ``whole_run``, for the summary)."""

    def close(self) -> None: ...


class StatefulService(Protocol):
    """A service whose state outlives a step (a replay's contents, a parameter server's weights and optimizer):
    saved with every checkpoint, restored on resume."""

    def checkpoint_parts(self) -> tuple[dict, dict]:
        """(modules, optimizers) the service holds, saved and loaded by name with the learner's."""

    def counters(self) -> dict: ...

    def load_counters(self, counters: dict) -> None: ...

    def save(self, folder) -> None:
        """Write what the service holds besides tensors by name (a replay's contents) into ``folder``."""

    def load(self, folder) -> None: ...

    def sync(self) -> None:
        """Bring state held elsewhere (Ray actors) into the parts before a checkpoint or the end."""


class ChannelSource(Protocol):
    """A service that writes a channel itself (SEED's inference server assembling unrolls)."""

    def take(self, timeout: float) -> tuple[dict, dict] | None:
        """One ``(arrays, info)`` for the channel, or ``None`` after ``timeout``."""


class ReplayIntake(Protocol):
    """A replay the backend feeds with producers' outputs, under its rate limiter."""

    def admits(self) -> bool:
        """May one more output go in now (Reverb's rate limiter: the learner is not too far behind)?"""

    def offer(self, output: Mapping[str, np.ndarray]) -> None:
        """Insert one producer output (the backend's transport delivered it here)."""

    def record_inserts(self, n: int) -> None:
        """``n`` items a producer inserted itself (Ray: straight into the replay actor), for the limiter."""


class SpawnedCopies(Protocol):
    """A service whose worker handles carry something a spawned process must own alone (a pipe end)."""

    def spawned(self, role: str, index: int) -> None:
        """Component ``index`` of ``role`` was started in its own process with its handle: drop this process's
        copy."""


class PerCallArgs(Protocol):
    """A service that sends something with each step call where the transport has no shared memory (Ray: the
    weights' object reference); the worker handle's ``receive`` takes it."""

    def call_args(self) -> Any: ...


class WorkerUpdates(Protocol):
    """A service that applies updates itself (a parameter server's, where workers learn)."""

    def applied_updates(self) -> int: ...


class SharedService(Protocol):
    """A service several programs share under one controller (a league's coordinator): it lives with the controller,
    and every program's components reach it through a :class:`SharedHandle` (``runtime/services/shared.py``)."""

    request_bytes: int  # the largest request it reads; a transport refuses a longer one unread

    def answer(self, request: bytes) -> bytes:
        """The reply to one request; ValueError (one line) for a request that is not one, changing nothing."""

    def close(self) -> None:
        """Stop: a request it holds returns now."""


class SharedHandle(Protocol):
    """A program's line to a :class:`SharedService`, in any process the backend gives it to (by name:
    ``core/shared.py``)."""

    def request(self, message: bytes) -> bytes:
        """The service's answer; ValueError (its one line) for a request it refused."""


class Backend(Protocol):
    """Places a program: ``inline``, ``local`` or ``ray``, one class each (``runtime/backends/``)."""

    name: str

    @staticmethod
    def refuses(program, num_learners: int) -> str | None:
        """Why this runtime cannot run ``program`` as asked (one line), or None; asked before anything starts."""

    @staticmethod
    def share(service: SharedService, token: str, bind: str | None = None):
        """Host ``service`` for programs on this runtime: an object with ``handle`` (a :class:`SharedHandle` for every
        process this runtime places components in) and ``close()``. ``bind``: where a network host listens."""

    def open(self, program) -> dict[str, Any]:
        """Build the services; return the learner's handles (by service name). (The run's seed is given
        to the backend's constructor, with its transport options.)"""

    def start(self, weights: tuple[np.ndarray, int] | None) -> None:
        """Publish the first weights and start every role's components."""

    def publish(self, weights_fn, version: int) -> None: ...

    def poll(self, timeout: float) -> tuple[list[dict], int]:
        """Infos of finished steps that emitted into no channel, and how many components were restarted."""

    def next_batch(self, timeout: float):
        """``(batch, infos, token)`` from the consumed channel, or ``None`` after ``timeout``."""

    def release(self, token) -> None: ...

    def request(self, role: str) -> None:
        """One step of a periodic role (an evaluation)."""

    def set_hyperparameters(self, values: Mapping[str, float], components: Mapping[str, float]) -> None:
        """``values`` to the services; ``components`` (a subset) also to every component."""

    def pause(self, paused: bool) -> None: ...

    def hold(self, roles: frozenset[str]) -> None:
        """Give the components of ``roles`` no new steps (what they have in flight still arrives) until a later
        call leaves their role out (paced roles, ``Role.env_steps_per_update``)."""

    def scale(self, role: str, active: int) -> None:
        """Run the first ``active`` components of elastic ``role`` (backends whose ``elastic`` is True): parked ones
        start, those beyond stop once their steps in flight are back."""

    def scaling(self, role: str) -> bool:
        """Are components of ``role`` still retiring (their last steps in flight), or started by the last ``scale``
        and not yet stepping?"""

    def role_activity(self, role: str) -> tuple[float, float]:
        """Seconds ``role``'s components have spent blocked (waiting for a step) and busy, so far."""

    def services(self) -> Mapping[str, Any]:
        """The service adapters, for checkpoints and statistics."""

    def stats(self) -> dict[str, Any]: ...

    def pids(self) -> list[int]: ...

    def close(self) -> None: ...


class Stateless:
    """A component base for the common case: no hyperparameters a run changes, nothing to close."""

    def set_hyperparameters(self, values: Mapping[str, float]) -> None:
        pass

    def close(self) -> None:
        pass


class Finishes:
    """A component base that declares last words: an elastic role's component the autoscaler retires (its steps all
    back) is told to ``finish`` before it stops, and sends what it still holds (SEED's env actor: its last step's
    outcome, completing its unroll on the inference server)."""

    def finish(self) -> None:
        raise NotImplementedError
