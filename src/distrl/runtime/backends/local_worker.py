"""The body of a component's process on the ``local`` runtime.

Monobeast's shape with one private pipe per component instead of shared queues: the backend sends
a step grant (with a free shared-memory slot when the role emits), the component writes its output
straight into that slot and sends back the slot with a small info dict. Outputs are never pickled (the one
array an info carries is an evaluator's weights with a new best, uncounted in ``transport_bytes``), and no
lock is shared between processes, so a component killed at any instant cannot wedge the others.
"""

from __future__ import annotations

import os
import sys
import time
import traceback

from distrl.core.protocols import Finishes
from distrl.core.shared import register as register_shared
from distrl.runtime.backends.process import (
    die_with_parent,
    ignore_interrupts,
    set_process_name,
)
from distrl.runtime.compute import setup_compute
from distrl.runtime.shared_memory import SharedArrays

GO, SET, FINISH = 0, 1, 2  # from the backend: (GO, slot or None), (SET, hyperparameters), (FINISH, None): retired
ERROR = "error"  # to the backend: (ERROR, traceback) just before a failed component exits


def worker_main(name: str, index: int, seed: int, make, handles: dict, uses: tuple[tuple[str, ...], tuple[str, ...]],
                slots_handle, control_handle, row: int, conn, torch_threads: int, shared: dict) -> None:
    """``control_handle``: shared ``stop`` flag and ``stats`` rows ([seconds waiting for a grant, seconds
    moving data, seconds in ``step``]); this component writes row ``row``. ``shared``: the handles of services shared
    with other programs, registered here by name before the component is made (its envs may reach them)."""
    ignore_interrupts()
    die_with_parent()
    set_process_name(f"distrl-{name}-{index}")
    setup_compute(torch_threads)
    slots = SharedArrays.attach(slots_handle) if slots_handle is not None else None
    slot_bytes = sum(a[0].nbytes for a in slots.arrays.values()) if slots is not None else 0
    control = SharedArrays.attach(control_handle)
    stop, stats = control.arrays["stop"], control.arrays["stats"]
    ppid = os.getppid()
    register_shared(shared)
    try:
        component = make(index, seed, handles)
        timed, counting = uses  # (placement.timed_uses, placement.counted_uses)
        readers = [handles[n] for n in timed]  # handles that time their pulls: transport, not work
        counted = [handles[n] for n in counting]  # handles that count the bytes they move between processes
        while not stop[0]:
            t0 = time.perf_counter()
            if not conn.poll(0.2):
                stats[row, 0] += time.perf_counter() - t0
                if os.getppid() != ppid:
                    return
                continue
            kind, value = conn.recv()
            if kind == SET:
                component.set_hyperparameters(value)
                continue
            if kind == FINISH:  # retired with no step in flight: its last words (core.protocols.Finishes), then gone
                if isinstance(component, Finishes):
                    component.finish()
                return
            t1 = time.perf_counter()
            pulled, moved = sum(r.seconds for r in readers), sum(h.bytes for h in counted)
            out = slots.view(value) if value is not None else None
            info = component.step(out)
            pulled = sum(r.seconds for r in readers) - pulled
            # bytes between processes: what the handles moved and the output written into shared memory
            info["transport_bytes"] = sum(h.bytes for h in counted) - moved + (slot_bytes if out is not None else 0)
            t2 = time.perf_counter()
            conn.send((value, info))
            t3 = time.perf_counter()
            idle = info.get("idle_s", 0.0)  # a step that found nothing to do waited, it did not work
            stats[row, 0] += t1 - t0 + idle
            stats[row, 1] += pulled + (t3 - t2)
            stats[row, 2] += t2 - t1 - pulled - idle
    except (EOFError, BrokenPipeError, KeyboardInterrupt):
        return  # the backend is gone or stopping
    except Exception:
        try:  # the backend prints it once, and only counts it when the same error comes again
            conn.send((ERROR, traceback.format_exc()))
        except (BrokenPipeError, OSError):
            traceback.print_exc()
        sys.exit(1)
