"""Keep freed tensor memory in the process (glibc's malloc), so a hot loop does not fault in fresh pages.

glibc serves an allocation above its mmap threshold (128 KiB at start, raised by the frees it sees, at most
32 MiB) with a fresh ``mmap`` and gives it back on ``free``, and it trims the heap's free top beyond
twice that threshold. A loop that makes and drops the same large tensors each step (QT-Opt's CEM scores
``updater_batch x cem_samples`` actions: [256 x 64, 128] floats, 8 MiB, per layer) then pays a page fault per
4 KiB page, every step: measured here, a Bellman updater's CEM over 256 states took 45-74 ms with glibc's
defaults and 28-29 ms with the thresholds below, the layer's matrix product being 7 ms of it. PyTorch's
CPU allocator has no cache of its own (it calls ``posix_memalign``/``free``); its tuning guide's remedy
is a preloaded jemalloc or tcmalloc, which needs a library and an ``LD_PRELOAD`` before the process starts.
``mallopt`` does the same for this case from inside a running process, with glibc alone: allocations up
to ``mmap_threshold`` come from the heap, and a heap's free top is handed back only beyond ``trim_threshold``
(per arena; free chunks below a live one stay mapped whatever the thresholds). Tensors above 32 MiB still get
a mapping of their own each time (a choice: glibc's own adaptive ceiling).

Each component process calls :func:`keep_freed_memory` once at start, through ``compute.setup_compute``. Nothing
happens where the C library is not glibc, where the user set glibc's malloc variables (``MALLOC_MMAP_THRESHOLD_``,
``MALLOC_TRIM_THRESHOLD_``, or ``glibc.malloc.*`` in ``GLIBC_TUNABLES``: theirs stand), or where
``DISTRL_KEEP_FREED_MEMORY=0`` keeps glibc's adaptive defaults (to measure against them, say)."""

from __future__ import annotations

import ctypes
import os
import platform

M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # glibc's <malloc.h>
MMAP_THRESHOLD = 32 << 20  # glibc's largest dynamic threshold (DEFAULT_MMAP_THRESHOLD_MAX on 64-bit)
TRIM_THRESHOLD = 128 << 20  # a heap's free top kept (per arena) before glibc hands it back
USER_VARIABLES = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_")
OPT_OUT = "DISTRL_KEEP_FREED_MEMORY"


def users_own_settings(environ) -> bool:
    """Whether ``environ`` sets glibc's malloc thresholds or opts out of ours."""
    return (any(v in environ for v in USER_VARIABLES) or "glibc.malloc." in environ.get("GLIBC_TUNABLES", "")
            or environ.get(OPT_OUT, "1") == "0")


def keep_freed_memory(mmap_threshold: int = MMAP_THRESHOLD, trim_threshold: int = TRIM_THRESHOLD) -> bool:
    """Set glibc's mmap and trim thresholds for this process; True if glibc accepted both (a preloaded
    jemalloc or tcmalloc, if any, does not read them). Idempotent."""
    if platform.libc_ver()[0] != "glibc" or users_own_settings(os.environ):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    return bool(mallopt(M_MMAP_THRESHOLD, mmap_threshold)) and bool(mallopt(M_TRIM_THRESHOLD, trim_threshold))
