"""The suite's own Ray helpers: a failed cluster start is cleaned up without touching Ray processes that another
test worker (``pytest -n 2``) or a user runs on the same machine, nor this process's other children (its
forkserver, whose command line names Ray's folders once Ray was imported)."""

import os
import signal
import subprocess
import sys

import psutil
import pytest

from tests.ray_cluster import stop_own_ray_processes

SLEEP = "import time; time.sleep(120)"


def test_only_this_processs_own_ray_processes_are_stopped():
    pytest.importorskip("ray")
    own_ray = subprocess.Popen(["ray::IDLE", "-c", SLEEP], executable=sys.executable)  # as a Ray worker shows
    own_other = subprocess.Popen([sys.executable, "-c", SLEEP, "/home/ray/site-packages/ray/thirdparty_files"])
    foreign = None
    try:
        # a Ray process of someone else: not a descendant of this process (its parent has exited)
        start = ("import subprocess, sys; "
                 f"print(subprocess.Popen(['ray::IDLE', '-c', {SLEEP!r}], executable=sys.executable, "
                 "stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).pid)")
        foreign = int(subprocess.run([sys.executable, "-c", start], capture_output=True, text=True,
                                     timeout=60).stdout)
        stop_own_ray_processes(grace_s=10)
        own_ray.wait(timeout=30)  # gone (reaped by the helper, so no return code to check)
        assert own_other.poll() is None
        assert psutil.Process(foreign).status() != psutil.STATUS_ZOMBIE
    finally:
        for p in (own_ray, own_other):
            p.kill()
            p.wait()
        if foreign is not None:
            try:
                os.kill(foreign, signal.SIGKILL)
            except ProcessLookupError:
                pass
