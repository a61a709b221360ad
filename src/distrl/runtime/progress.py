"""Progress display: a rich live bar on a terminal, plain log lines otherwise (CI, files, pipes)."""

from __future__ import annotations

import sys
import time


class Progress:
    def __init__(self, total_steps: int, label: str, start_steps: int = 0, enabled: bool = True):
        self.total = total_steps
        self.label = label
        self.enabled = enabled
        self.tty = enabled and sys.stdout.isatty()
        self._bar = None
        self._t0 = time.perf_counter()
        self._s0 = start_steps
        if self.tty:
            from rich.progress import BarColumn, Progress as RichProgress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

            self._bar = RichProgress(TextColumn("[bold]{task.description}"), BarColumn(), TextColumn("{task.completed:,.0f}/{task.total:,.0f} steps"),
                                     TextColumn("{task.fields[info]}"), TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn())
            self._task = self._bar.add_task(label, total=total_steps, completed=start_steps, info="")
            self._bar.start()

    def update(self, env_steps: int, sps: float, mean_return: float, extra: str = "") -> None:
        if not self.enabled:
            return
        ret = "n/a" if mean_return != mean_return else f"{mean_return:.1f}"
        info = f"{sps:,.0f} sps  return {ret} {extra}".rstrip()
        if self._bar is not None:
            self._bar.update(self._task, completed=min(env_steps, self.total), info=info)
        else:
            elapsed = time.perf_counter() - self._t0
            rate = (env_steps - self._s0) / max(elapsed, 1e-9)
            eta = (self.total - env_steps) / rate if rate > 0 else float("inf")
            print(f"[{self.label}] {env_steps:,}/{self.total:,} steps  {info}  eta {eta:.0f}s", flush=True)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
