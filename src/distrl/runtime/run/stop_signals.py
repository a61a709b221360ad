"""Ctrl-C, SIGTERM and SIGHUP (a closed terminal, a dropped SSH session) end a run as one: the run under way ends
with its checkpoint and no process is left behind. ``RunSignals`` is a trainer's; ``stop_signals`` is for a command
that drives several runs (a bench, a league). Only the main thread can take signals: from another one, nothing
changes."""

from __future__ import annotations

import contextlib
import signal
import threading

STOPS = tuple(s for s in (signal.SIGTERM, getattr(signal, "SIGHUP", None)) if s is not None)


class StopRequested(Exception):
    """SIGTERM or SIGHUP arrived during a trainer's run."""


def _raise_stop(signum, frame):
    raise StopRequested()


class RunSignals:
    """While a trainer runs: SIGTERM and SIGHUP raise :class:`StopRequested`, and Ctrl-C raises KeyboardInterrupt
    even where the process was started with SIGINT ignored (a background job of a script, some test runners: Python
    then installs no handler of its own). ``ignore()`` lets the close that follows a stop finish uncut."""

    def __enter__(self) -> RunSignals:
        self.previous = {sig: signal.signal(sig, _raise_stop) for sig in STOPS}
        self.previous[signal.SIGINT] = signal.signal(signal.SIGINT, signal.default_int_handler)
        return self

    def ignore(self) -> None:
        for sig in STOPS:
            signal.signal(sig, signal.SIG_IGN)

    def restore(self) -> None:
        for sig, handler in self.previous.items():
            signal.signal(sig, handler)
        self.previous = {}

    def __exit__(self, *exc) -> None:
        self.restore()


@contextlib.contextmanager
def stop_signals():
    def interrupt(signum, frame):
        raise KeyboardInterrupt

    main = threading.current_thread() is threading.main_thread()
    previous = {s: signal.signal(s, interrupt) for s in STOPS} if main else {}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
