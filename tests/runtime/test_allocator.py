"""The allocator thresholds: with them a large tensor comes from the heap and its pages stay mapped after it is
freed; with glibc's start-up thresholds it is a fresh mapping, unmapped again on free.

Read from glibc's own accounting (``mallinfo2``: bytes in mmapped blocks, heap bytes), not from time or page
faults (how many faults glibc's adaptive defaults cost varies run to run with the address-space layout). Each
case runs in a fresh interpreter, so the thresholds it sets, or not, are its own."""

import ctypes
import json
import platform
import subprocess
import sys

import pytest

from distrl.runtime.allocator import (
    OPT_OUT,
    keep_freed_memory,
    users_own_settings,
)
from tests.malloc_env import clean_environment

pytestmark = pytest.mark.skipif(platform.libc_ver()[0] != "glibc" or not hasattr(ctypes.CDLL(None), "mallinfo2"),
                                reason="mallopt and mallinfo2 are glibc's (2.33 and later)")

ACCOUNT = """
import ctypes, json, sys, torch
from distrl.runtime.allocator import keep_freed_memory
class Info(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in
                "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keepcost".split()]
libc = ctypes.CDLL(None)
libc.mallinfo2.restype = Info
def info():
    i = libc.mallinfo2()
    return {"mmapped": i.hblkhd, "heap": i.arena, "in_use": i.uordblks}
tuned = keep_freed_memory() if sys.argv[1] == "tuned" else None
before = info()
x = torch.ones(6 << 20)  # 24 MiB: above glibc's start-up threshold (128 KiB), below ours (32 MiB)
held = info()
del x
freed = info()
print(json.dumps({"tuned": tuned, "before": before, "held": held, "freed": freed}))
"""
SIZE = 24 << 20


def account(mode: str, env: dict | None = None) -> dict:
    out = subprocess.run([sys.executable, "-c", ACCOUNT, mode], capture_output=True, text=True, check=True,
                         env=env or clean_environment(), timeout=120).stdout
    return json.loads(out.splitlines()[-1])


def test_with_the_thresholds_a_large_tensor_comes_from_the_heap_and_stays_mapped():
    a = account("tuned")
    assert a["tuned"] is True
    assert a["held"]["mmapped"] - a["before"]["mmapped"] < SIZE  # not a mapping of its own
    assert a["held"]["in_use"] - a["before"]["in_use"] >= SIZE  # the heap holds it
    assert a["freed"]["heap"] == a["held"]["heap"] > a["before"]["heap"]  # and kept its pages when freed (no trim)


def test_without_them_it_is_a_mapping_of_its_own():
    a = account("default")
    assert a["tuned"] is None
    assert a["held"]["mmapped"] - a["before"]["mmapped"] >= SIZE
    assert a["freed"]["mmapped"] - a["before"]["mmapped"] < SIZE  # unmapped on free: the next one faults again


def test_the_users_own_glibc_variables_stand():
    a = account("tuned", clean_environment(MALLOC_MMAP_THRESHOLD_=str(1 << 20)))
    assert a["tuned"] is False
    assert a["held"]["mmapped"] - a["before"]["mmapped"] >= SIZE  # the user's 1 MiB threshold, not ours


@pytest.mark.parametrize("environ, own", [
    ({}, False), ({"MALLOC_TRIM_THRESHOLD_": "0"}, True), ({"MALLOC_MMAP_THRESHOLD_": "65536"}, True),
    ({"GLIBC_TUNABLES": "glibc.malloc.mmap_threshold=65536"}, True),
    ({"GLIBC_TUNABLES": "glibc.cpu.hwcaps=-AVX2"}, False),  # tunables of other kinds leave ours in place
    ({OPT_OUT: "0"}, True), ({OPT_OUT: "1"}, False)])
def test_which_environments_keep_glibcs_or_the_users_settings(environ, own):
    assert users_own_settings(environ) is own


def test_nothing_is_set_where_the_c_library_is_not_glibc(monkeypatch):
    monkeypatch.setattr(platform, "libc_ver", lambda: ("", ""))
    assert keep_freed_memory() is False
