"""Process hygiene for component processes: a name that says what they are, and no orphans."""

from __future__ import annotations

import ctypes
import multiprocessing as mp
import os
import signal
import sys
import threading
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
    """One component's restarts: the count (for its seed) and when they happened (for the crash-loop limit).
    ``errors`` is shared by a run's components: a traceback seen before, from any of them, is not printed again,
    only counted, and a component's restart is said on its 1st, 2nd, 4th, 8th, ... so that a crash loop over many
    actors says what failed once and a few lines after it, not one line per restart."""

    def __init__(self, limit: int = MAX_RESTARTS, window_s: float = RESTART_WINDOW_S,
                 errors: dict[str, int] | None = None):
        self.limit, self.window_s = limit, window_s
        self.count = 0
        self.starts = 0  # later starts that followed no failure (a seed of their own each, see fresh_start)
        self.times: deque[float] = deque()
        self.errors: dict[str, int] = {} if errors is None else errors

    def fresh_start(self) -> int:
        """A start that follows no failure (the autoscaler's): the seed number for a fresh seed, with no restart
        counted, said or tolled."""
        self.starts += 1
        return self.count + self.starts

    def record(self, name: str, reason: str, error: str = "") -> int:
        """One more restart of component ``name`` (``reason``: what happened; ``error``: its traceback, if
        it sent one). Past ``limit`` restarts within ``window_s`` raise :class:`ActorCrashLoop` naming
        the component's own error; else say so on stderr. Returns its new seed number (restarts and later starts)."""
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
        if not seen or self.count & (self.count - 1) == 0:  # a new error, or restart 1, 2, 4, 8, ...
            again = f" (the same error, {seen + 1} times in all)" if error and seen else ""
            print(f"distrl: {name} {reason}{again}; restarting it with a fresh seed (restart {self.count})",
                  file=sys.stderr, flush=True)
        return self.count + self.starts  # its seed number: never one it had before


# What the forkserver imports once, so that a component it forks starts without importing torch again (~2 s of
# CPU each with spawn; three short local IMPALA runs in one process, measured: 2.8 s each -> 1.1 s after the first)
PRELOAD = ("torch", "numpy", "gymnasium", "distrl.runtime.backends.local_worker")
_server_started_here = False


def process_context():
    """The multiprocessing context of a run's component processes: ``forkserver`` on Linux, ``spawn``
    elsewhere (on macOS a fork without exec after torch and Accelerate were imported is not safe, and the
    forkserver forks so) or where the server cannot start. Never plain ``fork``: the
    coordinator holds threads and (on a GPU) a CUDA context, which a forked child must not inherit; the
    server is a new Python that has only imported ``PRELOAD`` (numpy's BLAS starts its threads there, and
    OpenBLAS's fork handlers make forking it safe) and never touches CUDA.

    The server is Python's one per process: started here by the first run (it stays, idle, while this
    process lives), with SIGINT ignored (:class:`interrupts_ignored`: so are its children, from their first
    instruction, where a spawned child had it blocked until it could ignore it) and the user's main script
    hidden (:class:`main_module_hidden`). Other forkserver users in this process share it: their children
    too start with SIGINT ignored and torch imported. Where other code started it first, runs use that one
    (without the preload: slower start-ups; a child then ignores SIGINT once :func:`ignore_interrupts` runs).

    A child has the server's process state from when the server started (its fds 0-2, rlimits, niceness,
    affinity, and what the preloaded libraries read at import, such as ``OMP_NUM_THREADS``; torch's thread
    count is set in each component), except its environment and working directory, which are the caller's
    at the child's start (:func:`with_environment`; multiprocessing's preparation data)."""
    global _server_started_here
    if not sys.platform.startswith("linux"):
        return mp.get_context("spawn")
    from multiprocessing import forkserver

    ctx = mp.get_context("forkserver")
    if _server_started_here:
        try:
            forkserver.ensure_running()  # a no-op while it runs; no SIGINT handler swapped, none lost
            return ctx
        except OSError:
            return mp.get_context("spawn")
    try:
        with interrupts_ignored(), main_module_hidden():
            ctx.set_forkserver_preload(list(PRELOAD))  # used only by the start below, if this one starts it
            forkserver.ensure_running()
    except OSError:  # e.g. a socket path too long for AF_UNIX under a deep TMPDIR
        return mp.get_context("spawn")
    _server_started_here = True
    return ctx


def stop_forkserver() -> None:
    """End the forkserver this process started, and wait for it: the last thing a ``distrl`` command does, so that no
    process of it outlives it (left alone, the server ends on its own only once it reads the end of its pipe, up to
    a second after this process has gone). Python's own stop (``ForkServer._stop``, what its tests use); where a
    Python lacks it, the server ends as before."""
    global _server_started_here
    if not _server_started_here:
        return
    from multiprocessing import forkserver

    try:
        forkserver._forkserver._stop()
    except (AttributeError, OSError, ChildProcessError):
        pass
    _server_started_here = False


class interrupts_ignored:
    """Ignore SIGINT while starting the forkserver: an ignored signal stays ignored across ``exec``, so the
    server's Python installs no KeyboardInterrupt handler, and every child it forks starts with SIGINT
    ignored (it restores the dispositions the server started with). A blocked mask, as for spawn, does not
    reach it (``_posixsubprocess`` clears it). Only the main thread may change a handler: elsewhere the
    server starts as is (a child then ignores SIGINT once :func:`ignore_interrupts` runs, as before)."""

    def __enter__(self):
        self._old = None
        if threading.current_thread() is threading.main_thread():
            self._old = signal.signal(signal.SIGINT, signal.SIG_IGN)

    def __exit__(self, *exc):
        if self._old is not None:
            signal.signal(signal.SIGINT, self._old)


def with_environment(environ: dict | None, target, *args):
    """Run ``target(*args)`` in a forkserver's child (``environ`` given; under spawn it is None and the child is
    already as its starter was) under ``environ``, the starter's environment when it started this child: the
    child otherwise has the server's (a variable set since, say by a test or for ``CUDA_VISIBLE_DEVICES``,
    would be missing).

    A forkserver's child also inherits the write end of the server's "alive" pipe, which keeps the server up
    while any child lives, so a killed coordinator would leave the server, and the children whose
    ``PR_SET_PDEATHSIG`` waits for the server's death, running. Components start no processes of their own:
    the copy is closed here, and the server exits when the coordinator does. The kernel's signal is asked for
    first: while this child holds the pipe the server cannot exit, so the request is in place before it can."""
    if environ is not None:
        die_with_parent()
        _close_forkserver_alive_fd()
        os.environ.clear()
        os.environ.update(environ)
    return target(*args)


def _close_forkserver_alive_fd() -> None:
    from multiprocessing import forkserver

    server = getattr(forkserver, "_forkserver", None)
    fd = getattr(server, "_forkserver_alive_fd", None)
    if fd is None:
        return
    try:
        os.close(fd)
    except OSError:
        pass
    server._forkserver_alive_fd = None


def start_process(ctx, target, args: tuple, name: str):
    """Start a daemon component process running ``target(*args)`` with the caller's environment, the main
    script hidden (and, under spawn, SIGINT blocked until the child can ignore it)."""
    environ = dict(os.environ) if ctx.get_start_method() == "forkserver" else None
    p = ctx.Process(target=with_environment, args=(environ, target, *args), name=name, daemon=True)
    with interrupts_blocked(), main_module_hidden():
        p.start()
    return p


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
