"""The run's watch on non-finite learning: learners skip an update whose loss or gradient is NaN or inf (and
gradient-sharing workers skip such gradients); a streak of them means the data or the optimisation is broken, and
the run stops with its last checkpoint of finite weights (pruning never deletes it). An odd one is only counted."""

from __future__ import annotations

from pathlib import Path

from distrl.errors import RunStopped
from distrl.runtime.run.checkpoint import latest_checkpoint

NONFINITE_LIMIT = 25  # updates skipped in a row (or gradients by one worker) before a run stops


class NonfiniteWatch:
    def __init__(self, run_dir: Path, seen: int = 0):
        self.run_dir, self.seen, self.streak = run_dir, seen, 0

    def worker(self, info: dict) -> None:
        """A component's report: workers that learn count their own skipped gradients."""
        skipped = info.get("nonfinite_skipped", 0)
        if skipped >= NONFINITE_LIMIT:
            raise RunStopped(f"a worker's gradients were not finite {skipped} times (NaN or inf in its data, or "
                             f"diverging); the last checkpoint with finite weights is {self._last()}")

    def update(self, skipped, version_before: int, version_now: int) -> None:
        """After a learner step that reported ``skipped`` updates in all (None: it does not count them)."""
        if skipped is None:
            return
        if skipped > self.seen and version_now == version_before:
            self.streak += int(skipped - self.seen)
        elif version_now != version_before:
            self.streak = 0
        self.seen = skipped
        if self.streak >= NONFINITE_LIMIT:
            raise RunStopped(f"the learner's loss or gradient was not finite in {self.streak} updates in a row (NaN "
                             f"or inf in the data, or diverging); the last checkpoint with finite weights is "
                             f"{self._last()}")

    def _last(self) -> str:
        last = latest_checkpoint(self.run_dir / "checkpoints")
        return str(last) if last else "none yet"
