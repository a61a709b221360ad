"""The policy server's core: requests from many clients answered by one forward pass per batch.

Each transport thread (a gRPC stream, an HTTP request) hands in one observation and waits; one inference thread
takes whatever is queued (at most ``max_batch``; by default it waits for nobody: requests that arrive during a
forward pass form the next batch, so batches grow with the load and a lone client pays no wait; ``max_wait_s``
trades latency for larger batches), stacks it, runs the acting graph once and hands each caller its row. This is SEED's
dynamic batching (Espeholt et al. 2020, section 3) for clients that are not distrl's actors. A recurrent policy's state
is kept per session (a gRPC stream, or an HTTP client's ``session`` id): gathered into the batch, scattered back after
it; an episode start zeroes it. Sessions are bounded (the least recently used is dropped beyond ``max_sessions``), so no
client can grow the server's memory without bound.
"""

from __future__ import annotations

import queue
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field

import numpy as np
import torch

from distrl.deploy.checks import warn
from distrl.deploy.graphs import Graph

MAX_SESSIONS = 4096


@dataclass
class _Request:
    obs: np.ndarray
    session: object | None
    episode_start: bool
    done: threading.Event = field(default_factory=threading.Event)
    action: np.ndarray | None = None
    error: str | None = None


class Batcher:
    def __init__(self, graph: Graph, max_batch: int = 256, max_wait_s: float = 0.0,
                 max_sessions: int = MAX_SESSIONS):
        self.graph, self.module = graph, graph.module
        self.max_batch, self.max_wait_s, self.max_sessions = max_batch, max_wait_s, max_sessions
        self.recurrent = graph.recurrent
        if self.recurrent:
            self.state_size = graph.inputs["h"].shape[1]
        self._sessions: OrderedDict = OrderedDict()  # HTTP session -> (h, c), least recently used first
        self._streams: dict = {}  # gRPC stream -> (h, c)
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._held: list[_Request] = []  # requests of a session already in the batch being formed
        self._stop = threading.Event()
        self.batches = self.requests = 0
        self._thread = threading.Thread(target=self._loop, name="distrl-serve-inference", daemon=True)
        self._thread.start()

    def act(self, obs: np.ndarray, session: object | None = None, episode_start: bool = False,
            timeout_s: float = 30.0) -> np.ndarray:
        """The action for one (already validated) observation; blocks until its batch ran."""
        request = _Request(obs, session, episode_start)
        self._queue.put(request)
        if not request.done.wait(timeout_s):
            raise TimeoutError("the policy server did not answer in time")
        if request.error is not None:
            raise RuntimeError(request.error)
        return request.action

    def end_session(self, session: object) -> None:
        self._queue.put(("end", session))

    def close(self) -> None:
        self._stop.set()
        self._queue.put(None)
        self._thread.join(timeout=5.0)
        pending = self._held
        while True:  # whoever still waits is answered now, not at their timeout
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                break
            if isinstance(item, _Request):
                pending.append(item)
        for r in pending:
            r.error = "the policy server is shutting down"
            r.done.set()

    def _take(self) -> list[_Request]:
        batch: list[_Request] = []
        sessions: set = set()
        held, self._held = self._held, []

        def add(item) -> None:
            if isinstance(item, tuple):  # ("end", session): forget its state
                self._streams.pop(item[1], None)
                self._sessions.pop(item[1], None)
            elif item.session is not None and item.session in sessions or len(batch) >= self.max_batch:
                self._held.append(item)  # after this batch (the session's state this batch leaves)
            else:
                batch.append(item)
                if item.session is not None:
                    sessions.add(item.session)

        for item in held:
            add(item)
        deadline = time.perf_counter() + self.max_wait_s
        while len(batch) < self.max_batch:
            item = self._next(deadline) if batch else self._queue.get()
            if item is None:
                break
            add(item)
        return batch

    def _next(self, deadline: float):
        """The next queued item, waiting until ``deadline`` at most; None when there is none by then."""
        try:
            return self._queue.get(timeout=max(0.0, deadline - time.perf_counter()))
        except queue.Empty:
            return None

    def _store(self, session) -> dict:
        return self._streams if session[0] == "grpc" else self._sessions

    def _state(self, batch: list[_Request]) -> tuple[torch.Tensor, torch.Tensor]:
        h = torch.zeros(len(batch), self.state_size)
        c = torch.zeros(len(batch), self.state_size)
        for i, r in enumerate(batch):
            if r.session is not None and not r.episode_start and r.session in self._store(r.session):
                h[i], c[i] = self._store(r.session)[r.session]
        return h, c

    def _keep(self, batch: list[_Request], h: torch.Tensor, c: torch.Tensor) -> None:
        for i, r in enumerate(batch):
            if r.session is not None:
                store = self._store(r.session)
                store[r.session] = (h[i].clone(), c[i].clone())
                if store is self._sessions:
                    self._sessions.move_to_end(r.session)
        while len(self._sessions) > self.max_sessions:
            self._sessions.popitem(last=False)

    def _loop(self) -> None:
        while not self._stop.is_set():
            batch = self._take()
            if not batch:
                continue
            try:
                obs = torch.as_tensor(np.stack([r.obs for r in batch]))
                with torch.inference_mode():
                    if self.recurrent:
                        action, _, h, c = self.module(obs, *self._state(batch))
                        self._keep(batch, h, c)
                    else:
                        out = self.module(obs)
                        action = out[0] if isinstance(out, tuple) else out
                actions = action.numpy()
                for i, r in enumerate(batch):
                    r.action = actions[i]
            except Exception as e:  # one bad batch answers its callers with an error; the server goes on
                warn(f"inference failed on a batch of {len(batch)} ({type(e).__name__}: "
                     f"{str(e).splitlines()[0][:200] if str(e) else ''})")
                for r in batch:
                    r.error = "inference failed; the server's log says why"
            self.batches += 1
            self.requests += len(batch)
            for r in batch:
                r.done.set()
