"""Process hygiene for component processes: a name that says what they are, and no orphans."""

from __future__ import annotations

import ctypes
import signal
import sys
import time
from collections import deque

from distrl.errors import RunStopped

PR_SET_PDEATHSIG = 1


# A component may be restarted this many times within this many seconds; more is a crash loop. Counted per
# window, not per run: a rare crash in a long run is restarted as often as it happens.
MAX_RESTARTS = 10
RESTART_WINDOW_S = 300.0


class ActorCrashLoop(RunStopped):
    """A component keeps dying right after every restart: give up instead of restarting forever."""


class Restarts:
    """One component's restarts: the count (for its seed) and when they happened (for the crash-loop limit);
    an error seen before is not printed again, only counted."""

    def __init__(self, limit: int = MAX_RESTARTS, window_s: float = RESTART_WINDOW_S):
        self.limit, self.window_s = limit, window_s
        self.count = 0
        self.times: deque[float] = deque()
        self.errors: dict[str, int] = {}

    def record(self, name: str, reason: str, error: str = "") -> int:
        """One more restart of component ``name`` (``reason``: what happened; ``error``: its traceback, if
        it sent one). Past ``limit`` restarts within ``window_s`` raise :class:`ActorCrashLoop` naming
        the component's own error; else say so on stderr. Returns the new restart count."""
        now = time.monotonic()
        self.count += 1
        self.times.append(now)
        while self.times and now - self.times[0] > self.window_s:
            self.times.popleft()
        last_line = error.strip().splitlines()[-1] if error.strip() else ""
        if len(self.times) > self.limit:
            raise ActorCrashLoop(f"{name} {reason} {len(self.times)} times within {self.window_s:.0f} s"
                                 + (f", last with {last_line}" if last_line else "") + "; giving up")
        seen = self.errors.get(error, 0)
        self.errors[error] = seen + 1
        if error and not seen:
            print(error.rstrip(), file=sys.stderr, flush=True)
        again = f" (the same error, {seen + 1} times)" if error and seen else ""
        print(f"distrl: {name} {reason}{again}; restarting it with a fresh seed (restart {self.count})",
              file=sys.stderr, flush=True)
        return self.count


def set_process_name(name: str) -> None:
    """Show ``name`` in ``ps`` (argv and, on Linux, the 15-character comm field)."""
    try:
        import setproctitle

        setproctitle.setproctitle(name)
    except ImportError:
        pass
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None)
            libc.prctl(15, name.encode()[:15], 0, 0, 0)  # PR_SET_NAME
        except OSError:
            pass


def die_with_parent() -> None:
    """Ask the kernel to SIGTERM this process when its parent dies (Linux), so a killed
    coordinator leaves nothing behind."""
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
        except OSError:
            pass


def ignore_interrupts() -> None:
    """Children leave Ctrl-C to the coordinator, which stops them in order."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


class interrupts_blocked:
    """Block SIGINT while spawning, so a child cannot get a Ctrl-C before it can ignore it."""

    def __enter__(self):
        self._old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})

    def __exit__(self, *exc):
        signal.pthread_sigmask(signal.SIG_SETMASK, self._old)



class main_module_hidden:
    """Spawn children without re-running the user's ``__main__`` script.

    ``multiprocessing``'s spawn start method re-imports the parent's main script in every child, so
    a plain script that calls ``distrl.train(...)`` without an ``if __name__ == "__main__":`` guard
    would start training again in each actor. Components never need the user's main module (they
    are built from distrl's own modules and env ids), so it is hidden while children start.
    """

    def __enter__(self):
        self._main = sys.modules.get("__main__")
        self._saved = {}
        if self._main is not None:
            for attr in ("__file__", "__spec__"):
                if hasattr(self._main, attr):
                    self._saved[attr] = getattr(self._main, attr)
            if "__file__" in self._saved:
                del self._main.__file__
            self._main.__spec__ = None

    def __exit__(self, *exc):
        if self._main is not None:
            for attr, value in self._saved.items():
                setattr(self._main, attr, value)


def stop_processes(procs, grace_s: float = 3.0) -> None:
    """Wait up to ``grace_s`` in all for processes to leave on their own, then terminate, then kill."""
    import time

    deadline = time.monotonic() + grace_s
    live = [p for p in procs if p is not None]
    for p in live:
        p.join(timeout=max(deadline - time.monotonic(), 0.01))
    for p in live:
        if p.is_alive():
            p.terminate()
            p.join(timeout=1.0)
        if p.is_alive():
            p.kill()
            p.join(timeout=1.0)
