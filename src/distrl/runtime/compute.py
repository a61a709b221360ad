"""A component process's compute, set once where the process starts.

Every process that computes with torch or holds a replay (local workers, replica learners, Ray component
actors, the Ray parameter-server shards, the Ray replay servers, the trainer's process, the bench's ceiling
workers, the benchmarks' learner measurements) calls :func:`setup_compute` first: its share of the machine's
cores as torch's intra-op threads (the run's processes would otherwise each take all of them and oversubscribe
the cores) and glibc's malloc thresholds (``allocator.py``: freed tensor memory stays in the process). One call
site per process entry, so a new backend or service cannot set one and forget the other.
"""

from __future__ import annotations

from distrl.runtime.allocator import keep_freed_memory


def setup_compute(torch_threads: int | None = None) -> None:
    """Set this process's torch threads (None: leave them alone, for a process that runs no torch: the replay
    servers) and the allocator thresholds."""
    if torch_threads is not None:
        import torch

        torch.set_num_threads(torch_threads)
    keep_freed_memory()
