"""What hangs on a trainer: metrics rows (CSV and TensorBoard), checkpoints, the progress display.

Each is an observer with the same calls, so a run driven by PBT (or a notebook) can take any
subset; the CLI's run takes all three.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from distrl.errors import CheckpointNotWritten
from distrl.runtime.run.metrics import MetricsWriter
from distrl.runtime.run.progress import Progress


class Observer:
    def on_start(self, trainer) -> None: ...

    def on_step(self, trainer) -> None:
        """After every trainer iteration: keep it cheap."""

    def on_report(self, trainer, info: dict) -> None:
        """A component's report (one step's info), as the trainer accounts it: keep it cheap."""

    def on_row(self, trainer, row: dict) -> None:
        """A metrics row, every ``log_interval_s``."""

    def on_close(self, trainer, summary: dict | None) -> None:
        """The run ends (``summary`` is ``None`` when it ends in an error)."""


class MetricsObserver(Observer):
    def __init__(self, run_dir: Path):
        self.run_dir = run_dir
        self.writer: MetricsWriter | None = None

    def on_start(self, trainer) -> None:
        self.writer = MetricsWriter(self.run_dir)

    def on_row(self, trainer, row: dict) -> None:
        self.writer.write(row)

    def on_close(self, trainer, summary) -> None:
        if self.writer is not None:
            self.writer.close()


class CheckpointObserver(Observer):
    """A checkpoint every ``interval_s`` seconds and one at the end of a run that did not fail."""

    def __init__(self, interval_s: float):
        self.interval_s = interval_s
        self.last = time.perf_counter()

    def on_start(self, trainer) -> None:
        self.last = time.perf_counter()

    def on_step(self, trainer) -> None:
        if time.perf_counter() - self.last >= self.interval_s:
            try:
                trainer.checkpoint()
            except CheckpointNotWritten as e:  # the run goes on; the next interval tries again
                print(f"distrl: {e}; training goes on", file=sys.stderr, flush=True)
            self.last = time.perf_counter()

    def on_close(self, trainer, summary) -> None:
        if summary is not None:
            try:
                trainer.checkpoint()
            except CheckpointNotWritten as e:  # the summary is still written, and says so
                print(f"distrl: {e}", file=sys.stderr, flush=True)
                summary["checkpoint_error"] = str(e)


class ProgressObserver(Observer):
    def __init__(self, total_steps: int, label: str, enabled: bool = True, note: str = ""):
        self.total, self.label, self.enabled, self.note = total_steps, label, enabled, note
        self.progress: Progress | None = None

    def on_start(self, trainer) -> None:
        self.progress = Progress(self.total, self.label, trainer.env_steps, enabled=self.enabled, note=self.note)

    def on_row(self, trainer, row: dict) -> None:
        self.progress.update(row["env_steps"], row["sps"], row["episode_return_mean"])

    def on_close(self, trainer, summary) -> None:
        if self.progress is not None and not trainer.started:  # start() failed: no figures to show
            self.progress.close()
        elif self.progress is not None:
            stats = trainer.stats()
            self.progress.update(stats["env_steps"], stats["sps"], stats["episode_return_mean"])
            self.progress.close()
