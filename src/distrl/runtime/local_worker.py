"""The body of an actor process on the ``local`` runtime.

Monobeast's shape with one private pipe per actor instead of shared queues: the coordinator
sends a free slot index, the actor writes an unroll straight into that shared-memory slot and
sends back the index with a small info dict. The arrays are never pickled, and no lock is shared
between processes, so an actor killed at any instant cannot wedge the others.
"""

from __future__ import annotations

import os
import sys
import time
import traceback

from distrl.runtime.process import die_with_parent, ignore_interrupts, set_process_name
from distrl.runtime.shared_memory import SharedArrays
from distrl.runtime.weights import SharedWeights


def actor_main(index: int, seed: int, make_actor, slots_handle, weights_handle, conn, stop, stats,
               torch_threads: int, shared=None) -> None:
    ignore_interrupts()
    die_with_parent()
    set_process_name(f"distrl-actor-{index}")
    import torch

    torch.set_num_threads(torch_threads)
    slots = SharedArrays.attach(slots_handle)
    weights = SharedWeights.attach(weights_handle)
    ppid = os.getppid()
    try:
        actor = make_actor(index, seed, shared)
        local_version = -1
        while not stop[0]:
            t0 = time.perf_counter()
            if not conn.poll(0.2):
                stats[2 * index] += time.perf_counter() - t0
                if os.getppid() != ppid:
                    return
                continue
            slot = conn.recv()
            t1 = time.perf_counter()
            if shared is None and weights.version != local_version:
                flat, local_version = weights.pull()
                actor.set_weights(flat, local_version)
            t2 = time.perf_counter()
            info = actor.unroll(slots.view(slot))
            t3 = time.perf_counter()
            conn.send((slot, info))
            t4 = time.perf_counter()
            stats[2 * index] += t1 - t0
            stats[2 * index + 1] += (t2 - t1) + (t4 - t3)
    except (EOFError, BrokenPipeError, KeyboardInterrupt):
        return  # the coordinator is gone or stopping
    except Exception:
        traceback.print_exc()
        sys.exit(1)
