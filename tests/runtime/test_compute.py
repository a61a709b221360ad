"""A component process's compute set-up: the torch threads it is given (or torch's own), and the allocator
thresholds (whose effect ``test_allocator.py`` reads from glibc's accounting). Threads are read in a fresh
interpreter, so the test's own process keeps its settings."""

import json
import subprocess
import sys

import pytest

from tests.malloc_env import clean_environment

SETUP = """
import json, torch
from distrl.runtime.compute import setup_compute
default = torch.get_num_threads()
setup_compute(None)
untouched = torch.get_num_threads()
setup_compute(1)
print(json.dumps({"default": default, "untouched": untouched, "set": torch.get_num_threads()}))
"""


def test_setup_compute_sets_the_threads_it_is_given():
    out = subprocess.run([sys.executable, "-c", SETUP], capture_output=True, text=True, check=True,
                         env=clean_environment(OMP_NUM_THREADS="2"), timeout=120).stdout
    threads = json.loads(out.splitlines()[-1])
    assert threads == {"default": 2, "untouched": 2, "set": 1}


@pytest.mark.parametrize("threads", [None, 1])
def test_setup_compute_always_sets_the_allocator_thresholds(monkeypatch, threads):
    calls = []
    monkeypatch.setattr("distrl.runtime.compute.keep_freed_memory", lambda: calls.append(True))
    monkeypatch.setattr("torch.set_num_threads", lambda n: calls.append(n))  # the test process keeps its own
    from distrl.runtime.compute import setup_compute

    setup_compute(threads)
    assert calls == ([True] if threads is None else [threads, True])
