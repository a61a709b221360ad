"""A component process's compute set-up: the torch threads it is given (or torch's own), and the allocator
thresholds (whose effect ``test_allocator.py`` reads from glibc's accounting). Threads are read in a fresh
interpreter, so the test's own process keeps its settings."""

import json
import subprocess
import sys

from tests.runtime.test_allocator import clean_environment

SETUP = """
import json, torch
from distrl.runtime.compute import setup_compute
default = torch.get_num_threads()
setup_compute(None)
untouched = torch.get_num_threads()
setup_compute(1)
print(json.dumps({"default": default, "untouched": untouched, "set": torch.get_num_threads()}))
"""


def test_setup_compute_sets_the_threads_it_is_given_and_the_thresholds(monkeypatch):
    out = subprocess.run([sys.executable, "-c", SETUP], capture_output=True, text=True, check=True,
                         env=clean_environment(OMP_NUM_THREADS="2"), timeout=120).stdout
    threads = json.loads(out.splitlines()[-1])
    assert threads == {"default": 2, "untouched": 2, "set": 1}
    calls = []
    monkeypatch.setattr("distrl.runtime.compute.keep_freed_memory", lambda: calls.append(True))
    from distrl.runtime.compute import setup_compute

    setup_compute()
    assert calls == [True]
