"""Named arrays in POSIX shared memory, allocated once and attached by name in other processes.

``multiprocessing.shared_memory`` gives raw blocks; this adds the numpy views, a picklable
handle, and pre-faulting (every page is touched at allocation, so the first fill is not slowed by
page faults). Only the creator unlinks; spawned children share the creator's resource tracker,
so a block is still reclaimed if the whole process tree dies.
"""

from __future__ import annotations

import errno
import os
from multiprocessing import shared_memory

import numpy as np

from distrl.core.types import ArraySpec
from distrl.errors import ConfigError

SHM_DIR = "/dev/shm"  # where POSIX shared memory lives on Linux


def free_bytes(folder: str = SHM_DIR) -> int | None:
    """The shared memory left to allocate (the free space of ``/dev/shm``), or None where there is no such folder to
    measure (macOS): a block larger than it fails only when its pages are first written, with SIGBUS, not an error."""
    try:
        stats = os.statvfs(folder)
    except OSError:
        return None
    return stats.f_bavail * stats.f_frsize


def byte_size(n: int) -> str:
    """1536 -> '1.5 KiB', 248_000_000 -> '236.5 MiB': a size in a message."""
    size, unit = float(n), "bytes"
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB"):
        if round(size, 1) < 1024 or unit == "TiB":
            break
        size /= 1024
    return f"{n} bytes" if unit == "bytes" else f"{size:.1f} {unit}"


def reserve(block: shared_memory.SharedMemory, nbytes: int) -> None:
    """Take the block's pages from /dev/shm now: a block larger than the space left is an error here (ENOSPC), not
    SIGBUS at its first write, which kills the process with no message. Where there is no posix_fallocate (macOS),
    as before."""
    fd = getattr(block, "_fd", -1)
    if fd < 0 or not hasattr(os, "posix_fallocate"):
        return
    try:
        os.posix_fallocate(fd, 0, nbytes)
    except OSError as e:
        if e.errno != errno.ENOSPC:  # a file system that cannot reserve (EOPNOTSUPP, EINVAL): as before
            return
        free = free_bytes()
        raise ConfigError(f"shared memory: a block of {byte_size(nbytes)} does not fit in {SHM_DIR} ("
                          f"{'?' if free is None else byte_size(free)} free): give the run less to keep there (fewer "
                          "actors, shorter unrolls, ES's noise_table_size) or the machine more (docker run "
                          "--shm-size=...)") from None


class SharedArrays:
    def __init__(self, blocks: dict[str, shared_memory.SharedMemory], specs: dict[str, ArraySpec],
                 leading: tuple[int, ...], owner: bool):
        self.blocks = blocks
        self.specs = specs
        self.leading = leading
        self.owner = owner
        self.arrays = {name: np.ndarray(leading + s.shape, dtype=s.dtype, buffer=blocks[name].buf)
                       for name, s in specs.items()}

    @classmethod
    def create(cls, specs: dict[str, ArraySpec], leading: tuple[int, ...] = ()) -> SharedArrays:
        blocks = {}
        try:
            for name, s in specs.items():
                nbytes = max(int(np.prod(leading, dtype=np.int64)) * s.nbytes, 1)
                blocks[name] = shared_memory.SharedMemory(create=True, size=nbytes)
                reserve(blocks[name], nbytes)
        except BaseException:
            for block in blocks.values():
                block.close()
                block.unlink()
            raise
        arrays = cls(blocks, specs, leading, owner=True)
        for a in arrays.arrays.values():
            a.fill(0)  # pre-fault every page now, not during the first unrolls
        return arrays

    def handle(self) -> tuple:
        return ({n: b.name for n, b in self.blocks.items()}, self.specs, self.leading)

    @classmethod
    def attach(cls, handle: tuple) -> SharedArrays:
        names, specs, leading = handle
        blocks = {}
        for n, shm_name in names.items():
            blocks[n] = shared_memory.SharedMemory(name=shm_name)
        return cls(blocks, specs, leading, owner=False)

    def view(self, index: int) -> dict[str, np.ndarray]:
        """The arrays of slot ``index`` (no copy)."""
        return {n: a[index] for n, a in self.arrays.items()}

    def close(self) -> None:
        self.arrays = {}
        for b in self.blocks.values():
            try:
                b.close()
            except BufferError:
                pass  # a view is still alive somewhere in this process; the OS frees it at exit
            if self.owner:
                try:
                    b.unlink()
                except FileNotFoundError:
                    pass
        self.blocks = {}
