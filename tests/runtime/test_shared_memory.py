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
