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
        self._sessions: OrderedDict = OrderedDict()  # session -> (h, c), least recently used first
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
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

    def _take(self) -> list[_Request]:
        first = self._queue.get()
        batch, deadline = [], time.perf_counter() + self.max_wait_s
        item = first
        while True:
            if item is None:
                return batch
            if isinstance(item, tuple):  # ("end", session): forget its state
                self._sessions.pop(item[1], None)
            else:
                batch.append(item)
            if len(batch) >= self.max_batch:
                return batch
            try:
                item = self._queue.get(timeout=max(0.0, deadline - time.perf_counter())) if batch \
                    else self._queue.get()
            except queue.Empty:
                return batch

    def _state(self, batch: list[_Request]) -> tuple[torch.Tensor, torch.Tensor]:
        h = torch.zeros(len(batch), self.state_size)
        c = torch.zeros(len(batch), self.state_size)
        for i, r in enumerate(batch):
            if r.session is not None and not r.episode_start and r.session in self._sessions:
                h[i], c[i] = self._sessions[r.session]
                self._sessions.move_to_end(r.session)
        return h, c

    def _keep(self, batch: list[_Request], h: torch.Tensor, c: torch.Tensor) -> None:
        for i, r in enumerate(batch):
            if r.session is not None:
                self._sessions[r.session] = (h[i].clone(), c[i].clone())
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
            except Exception as e:  # one bad batch answers its callers with the error; the server goes on
                for r in batch:
                    r.error = f"inference failed ({type(e).__name__}: {str(e)[:200]})"
            self.batches += 1
            self.requests += len(batch)
            for r in batch:
                r.done.set()
