"""The env actor's side of SEED: a loop that turns actions into the next request, over any link.

A link is the client end of a transport: ``request(arrays, timings) -> actions`` (``None`` when
the server is gone). The loop measures the two numbers the server reports for actors: the round
trip of each request (time spent idle, waiting for actions) and the time spent stepping envs.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol

import numpy as np


class Link(Protocol):
    bytes: int  # requests and actions moved so far (0 where the server is in the same process)

    def request(self, arrays: dict[str, np.ndarray], timings: np.ndarray) -> np.ndarray | None: ...


def run_env_actor(actor, link: Link, should_stop: Callable[[], bool] = lambda: False) -> None:
    req = actor.reset()
    timings = np.zeros(2)  # [previous round trip s, env s since the previous request]
    while not should_stop():
        t0 = time.perf_counter()
        actions = link.request(req, timings)
        t1 = time.perf_counter()
        if actions is None:
            return
        req = actor.advance(actions)
        timings[0] = t1 - t0
        timings[1] = time.perf_counter() - t1
