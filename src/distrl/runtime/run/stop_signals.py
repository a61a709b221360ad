"""SIGTERM and SIGHUP stop a command that drives several runs (a bench, a league) as Ctrl-C does: the run under way
ends with its checkpoint, and no process is left behind. Only the main thread can take signals: from another one,
nothing changes."""

from __future__ import annotations

import contextlib
import signal
import threading


@contextlib.contextmanager
def stop_signals():
    def interrupt(signum, frame):
        raise KeyboardInterrupt

    stops = [s for s in (signal.SIGTERM, getattr(signal, "SIGHUP", None)) if s is not None]
    main = threading.current_thread() is threading.main_thread()
    previous = {s: signal.signal(s, interrupt) for s in stops} if main else {}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
