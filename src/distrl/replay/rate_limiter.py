"""Sample-to-insert rate limiting (Reverb, arXiv:2102.04736, section 3.3).

Keeps ``samples - samples_per_insert * (inserts - min_size_to_sample)`` within ``± error_buffer``:
a learner cannot over-sample a young buffer and actors cannot flood a slow learner. Both sides
block with a timeout (``TimeoutError``), never forever, so a stalled peer cannot deadlock a run.
"""

from __future__ import annotations

import threading
import time


class RateLimiter:
    def __init__(self, samples_per_insert: float, min_size_to_sample: int, error_buffer: float):
        if samples_per_insert <= 0 or error_buffer < 0 or min_size_to_sample < 1:
            raise ValueError("need samples_per_insert > 0, error_buffer >= 0, min_size_to_sample >= 1")
        self.spi = samples_per_insert
        self.min_size = min_size_to_sample
        self.error_buffer = error_buffer
        self.inserts = 0
        self.samples = 0
        self._cond = threading.Condition()

    def _diff(self, extra_samples: int = 0, extra_inserts: int = 0) -> float:
        return (self.samples + extra_samples) - self.spi * (self.inserts + extra_inserts - self.min_size)

    def can_insert(self, n: int = 1) -> bool:
        return self.inserts + n <= self.min_size or self._diff(extra_inserts=n) >= -self.error_buffer

    def caught_up(self) -> bool:
        """May the next producer output go in? Before ``min_size`` inserts always; after, once the
        learner has taken all but ``error_buffer`` of the samples the inserts so far allow. A runtime
        admits one output (a chunk of many items) at a time on this test, so the learner stays within a
        chunk of the ratio, whatever the chunk size."""
        return self.inserts < self.min_size or self._diff() >= -self.error_buffer

    def can_sample(self, n: int = 1) -> bool:
        return self.inserts >= self.min_size and self._diff(extra_samples=n) <= self.error_buffer

    def record_insert(self, n: int) -> None:
        """Count ``n`` inserts that were admitted elsewhere (e.g. by a runtime's slot back-pressure)."""
        with self._cond:
            self.inserts += n
            self._cond.notify_all()

    def try_sample(self, n: int) -> bool:
        """Non-blocking: take ``n`` samples' allowance if there is one."""
        with self._cond:
            if not self.can_sample(n):
                return False
            self.samples += n
            self._cond.notify_all()
            return True

    def await_insert(self, n: int = 1, timeout: float | None = None) -> None:
        self._await(lambda: self.can_insert(n), timeout, "insert")
        with self._cond:
            self.inserts += n
            self._cond.notify_all()

    def await_sample(self, n: int = 1, timeout: float | None = None) -> None:
        self._await(lambda: self.can_sample(n), timeout, "sample")
        with self._cond:
            self.samples += n
            self._cond.notify_all()

    def _await(self, ready, timeout: float | None, what: str) -> None:
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while not ready():
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    raise TimeoutError(f"rate limiter: could not {what} within {timeout} s "
                                       f"(inserts {self.inserts}, samples {self.samples})")
                self._cond.wait(timeout=left if left is not None else 1.0)

    def state(self) -> dict:
        return {"inserts": self.inserts, "samples": self.samples}

    def load(self, state: dict) -> None:
        self.inserts, self.samples = state["inserts"], state["samples"]


class Unlimited:
    """No ratio: a replay filled once (demonstrations) and sampled at will once it holds ``min_size`` items.
    The :class:`RateLimiter` surface the replay services use."""

    def __init__(self, min_size_to_sample: int = 1):
        self.min_size = min_size_to_sample
        self.inserts = 0
        self.samples = 0

    def caught_up(self) -> bool:
        return True

    def can_insert(self, n: int = 1) -> bool:
        return True

    def can_sample(self, n: int = 1) -> bool:
        return self.inserts >= self.min_size

    def record_insert(self, n: int) -> None:
        self.inserts += n

    def try_sample(self, n: int) -> bool:
        if not self.can_sample(n):
            return False
        self.samples += n
        return True

    def state(self) -> dict:
        return {"inserts": self.inserts, "samples": self.samples}

    def load(self, state: dict) -> None:
        self.inserts, self.samples = state["inserts"], state["samples"]
