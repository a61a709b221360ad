"""The suite's own Ray helpers: a failed cluster start is cleaned up without touching Ray processes that another
test worker (``pytest -n 2``) or a user runs on the same machine."""

import os
import signal
import subprocess
import sys

import psutil

from tests.ray_cluster import stop_own_ray_processes

SLEEP = "import time; time.sleep(120)"


def test_only_this_processs_own_ray_processes_are_stopped():
    own_ray = subprocess.Popen([sys.executable, "-c", SLEEP, "ray::IDLE"])
    own_other = subprocess.Popen([sys.executable, "-c", SLEEP, "not-it"])
    foreign = None
    try:
        # a Ray process of someone else: not a descendant of this process (its parent has exited)
        start = (f"import subprocess, sys; print(subprocess.Popen([sys.executable, '-c', {SLEEP!r}, 'ray::IDLE'], "
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
