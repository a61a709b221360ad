"""Named arrays in shared memory: what one process writes, another attached by name reads; only the creator
unlinks."""

import multiprocessing as mp
from multiprocessing import shared_memory

import numpy as np
import pytest

from distrl.core.types import ArraySpec
from distrl.runtime.shared_memory import SharedArrays

SPECS = {"obs": ArraySpec((3,), np.float32), "done": ArraySpec((), np.bool_)}


def _write_slot(handle, index, value):
    arrays = SharedArrays.attach(handle)
    arrays.view(index)["obs"][:] = value  # a slot's view is the shared block itself, no copy
    arrays.arrays["done"][index] = True
    arrays.close()


def test_a_child_process_writes_what_the_creator_reads():
    arrays = SharedArrays.create(SPECS, leading=(4,))
    try:
        assert arrays.arrays["obs"].shape == (4, 3) and not arrays.arrays["obs"].any()  # zero-filled (pre-faulted)
        ctx = mp.get_context("spawn")
        child = ctx.Process(target=_write_slot, args=(arrays.handle(), 2, 7.5))
        child.start()
        child.join(120)
        assert child.exitcode == 0
        np.testing.assert_array_equal(arrays.arrays["obs"][2], [7.5, 7.5, 7.5])
        assert arrays.arrays["done"].tolist() == [False, False, True, False]
        assert not arrays.arrays["obs"][[0, 1, 3]].any()
    finally:
        arrays.close()


def test_only_the_creator_unlinks():
    arrays = SharedArrays.create(SPECS, leading=(2,))
    name = arrays.blocks["obs"].name
    attached = SharedArrays.attach(arrays.handle())
    attached.arrays["obs"][0, 0] = 1.0
    attached.close()  # a reader's close leaves the block for the others
    assert arrays.arrays["obs"][0, 0] == 1.0
    arrays.close()
    with pytest.raises(FileNotFoundError):
        shared_memory.SharedMemory(name=name)


def test_the_free_shared_memory_is_measured_where_there_is_a_folder_to_measure(tmp_path):
    from distrl.runtime.shared_memory import free_bytes

    assert free_bytes(str(tmp_path)) > 0
    assert free_bytes(str(tmp_path / "missing")) is None


def test_a_block_the_free_shared_memory_cannot_hold_is_one_error_and_no_block_is_left(monkeypatch):
    """Without the reservation the first write into such a block is SIGBUS: the process dies with no message."""
    import errno
    import os

    from distrl.errors import ConfigError
    from distrl.runtime import shared_memory as sm

    if not hasattr(os, "posix_fallocate"):
        pytest.skip("no posix_fallocate here (macOS): blocks are not reserved")
    made = []
    real = sm.shared_memory.SharedMemory

    def recording(*args, **kwargs):
        made.append(real(*args, **kwargs))
        return made[-1]

    def full(fd, offset, size):
        if size > 1000:
            raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(sm.shared_memory, "SharedMemory", recording)
    monkeypatch.setattr(os, "posix_fallocate", full)
    with pytest.raises(ConfigError, match=r"a block of 3.9 KiB does not fit in /dev/shm .*--shm-size"):
        SharedArrays.create({"small": ArraySpec((10,), "float32"), "large": ArraySpec((1000,), "float32")})
    assert len(made) == 2
    for block in made:  # both unlinked: nothing left in /dev/shm
        with pytest.raises(FileNotFoundError):
            real(name=block.name)
