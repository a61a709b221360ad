"""Refuse a replay that cannot fit in this machine's memory, before allocating it.

Without this, a replay sized beyond the machine (``--set replay_size=2000000000``) either fails deep inside
numpy with a traceback or, where the pages are touched (prefaulted rings, shared memory), gets the whole
process tree killed by the kernel. Each allocation of a replay's storage is checked against the memory
available now (``MemAvailable``), and a misfit is one line naming the sizes.
"""

from __future__ import annotations

import os

from distrl.errors import ConfigError


def available_bytes() -> int | None:
    """Memory available to new allocations (Linux's ``MemAvailable``; free pages elsewhere), or None if unknown."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_AVPHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def check_fits(nbytes: int, what: str) -> None:
    available = available_bytes()
    if available is not None and nbytes > available:
        raise ConfigError(f"{what} needs {nbytes / 2**30:,.1f} GiB of memory and this machine has "
                          f"{available / 2**30:,.1f} GiB available: lower the setting that sizes it "
                          f"(replay_size, target_buffer_size, ...)")
