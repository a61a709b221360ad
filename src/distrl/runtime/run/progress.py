"""Progress display, on standard error: a rich live bar on a terminal, plain log lines otherwise (CI, files, pipes).
Standard output is left to the run's result (the summary, one JSON line for a program), as tqdm and the other
``distrl`` commands leave it: ``distrl train ... | jq .sps`` reads the summary alone while the progress shows.

The bar fits an 80-column terminal: a short label, a fixed-width bar, and compact numbers
("680k/1.50M steps  210k sps  R 487.3  ETA 0:05"). If whoever reads the plain lines goes away (a
closed pipe), the lines stop and the run goes on.
"""

from __future__ import annotations

import sys
import time


def compact(n: float) -> str:
    """1234 -> 1.2k, 1_500_000 -> 1.50M: numbers that keep their width."""
    n = float(n)
    for size, unit in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(n) >= size:
            value = n / size
            return f"{value:.2f}{unit}" if value < 10 else f"{value:.1f}{unit}" if value < 100 else f"{value:.0f}{unit}"
    return f"{n:.0f}"


def clock(seconds: float) -> str:
    if seconds != seconds or seconds == float("inf"):
        return "-:--"
    seconds = int(seconds)
    h, rem = divmod(seconds, 3600)
    return f"{h}:{rem // 60:02d}:{rem % 60:02d}" if h else f"{rem // 60}:{rem % 60:02d}"


class Progress:
    def __init__(self, total_steps: int, label: str, start_steps: int = 0, enabled: bool = True, note: str = ""):
        """``note``: one line said before the first figures (the budget rounded up to whole batches)."""
        self.total = total_steps
        self.label = label if len(label) <= 24 else label[:23] + "~"
        self.enabled = enabled
        self.tty = enabled and sys.stderr.isatty()
        self._bar = None
        self._t0 = time.perf_counter()
        self._s0 = start_steps
        if note and enabled:
            self._print(f"[{self.label}] {note}")
        if self.tty:
            from rich.console import Console
            from rich.progress import BarColumn, TextColumn
            from rich.progress import Progress as RichProgress

            self._bar = RichProgress(TextColumn("[bold]{task.description}"), BarColumn(bar_width=12),
                                     TextColumn("{task.fields[info]}"), transient=False, console=Console(stderr=True))
            self._task = self._bar.add_task(self.label, total=total_steps, completed=start_steps,
                                            info=self._info(start_steps, float("nan"), float("nan")))
            self._bar.start()

    def _info(self, env_steps: int, sps: float, mean_return: float) -> str:
        ret = "-" if mean_return != mean_return else f"{mean_return:.1f}"
        elapsed = time.perf_counter() - self._t0
        rate = (env_steps - self._s0) / max(elapsed, 1e-9)
        eta = max(self.total - env_steps, 0) / rate if rate > 0 else float("inf")  # past the budget: 0:00
        speed = "-" if sps != sps else compact(sps)
        return f"{compact(env_steps)}/{compact(self.total)}  {speed} sps  R {ret}  ETA {clock(eta)}"

    def update(self, env_steps: int, sps: float, mean_return: float) -> None:
        if not self.enabled:
            return
        info = self._info(env_steps, sps, mean_return)
        if self._bar is not None:
            self._bar.update(self._task, completed=min(env_steps, self.total), info=info)
            return
        self._print(f"[{self.label}] {info}")

    def _print(self, line: str) -> None:
        try:
            print(line, file=sys.stderr, flush=True)
        except BrokenPipeError:  # the reader left; training goes on without the lines
            self.enabled = False

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
