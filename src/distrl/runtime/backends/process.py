"""Process hygiene for component processes: a name that says what they are, and no orphans."""

from __future__ import annotations

import ctypes
import signal
import sys

PR_SET_PDEATHSIG = 1


MAX_RESTARTS_PER_ACTOR = 20


class ActorCrashLoop(RuntimeError):
    """An actor keeps dying right after every restart: give up instead of restarting forever."""


def count_restart(name: str, restarts: int, reason: str) -> int:
    """One more restart of component ``name`` (``reason``: what happened to it): past
    ``MAX_RESTARTS_PER_ACTOR`` give up, else say so on stderr. Returns the new count."""
    restarts += 1
    if restarts > MAX_RESTARTS_PER_ACTOR:
        raise ActorCrashLoop(f"{name} {reason} {restarts} times; giving up")
    print(f"distrl: {name} {reason}; restarting it with a fresh seed (restart {restarts})", file=sys.stderr, flush=True)
    return restarts


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
