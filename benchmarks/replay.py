"""Prioritized replay throughput: distrl's sum tree against cpprb (C++/Cython) and, when installed,
tianshou (numba sum tree), side by side in one run.

    pip install -e ".[bench]" && python benchmarks/replay.py [--pixels]

For each buffer: inserts/s (chunks of 64 transitions), sample(512) + update_priorities(512) per
second once full, bytes per stored transition, and the time of the first fill (page faults), at
1,000,000 capacity with 4-float observations and (with --pixels) at 100,000 with 4x84x84 uint8.
alpha 0.6, beta 0.4.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path

import numpy as np

from distrl.core.types import ArraySpec
from distrl.replay import Replay

sys.path.insert(0, str(Path(__file__).resolve().parent))
from doc_blocks import add_flag, start  # noqa: E402  (the benchmarks folder's own helper)


def transitions(n: int, obs_shape, obs_dtype, rng):
    if obs_dtype == np.uint8:
        obs = rng.integers(0, 255, (n,) + obs_shape, dtype=np.uint8)
    else:
        obs = rng.standard_normal((n,) + obs_shape).astype(np.float32)
    return {"obs": obs, "action": rng.integers(0, 4, n), "reward": rng.standard_normal(n).astype(np.float32),
            "discount": np.full(n, 0.97, np.float32), "next_obs": obs.copy()}


def stream_chunks(count: int, rng, envs: int = 4, steps: int = 16, n: int = 3):
    """Chunks of 64 frame-stacked transitions as an actor sends them (4 envs x 16 consecutive steps,
    n-step next observations), continuing from chunk to chunk: what frame sharing sees in a real run."""
    frames = rng.integers(0, 255, (envs, count * steps + n + 3, 84, 84), dtype=np.uint8)
    chunks = []
    for c in range(count):
        ts = range(c * steps, (c + 1) * steps)
        obs = np.stack([frames[e, t:t + 4] for e in range(envs) for t in ts])
        nxt = np.stack([frames[e, t + n:t + n + 4] for e in range(envs) for t in ts])
        m = len(obs)
        chunks.append({"obs": obs, "action": rng.integers(0, 4, m), "reward": rng.standard_normal(m).astype(np.float32),
                       "discount": np.full(m, 0.97, np.float32), "next_obs": nxt})
    return chunks


class DistrlBuffer:
    name = "distrl"

    frame_stacks = None

    def __init__(self, capacity, obs_shape, obs_dtype):
        spec = {"obs": ArraySpec(obs_shape, np.dtype(obs_dtype).name), "action": ArraySpec((), "int64"),
                "reward": ArraySpec((), "float32"), "discount": ArraySpec((), "float32"),
                "next_obs": ArraySpec(obs_shape, np.dtype(obs_dtype).name)}
        self.r = Replay.prioritized(spec, capacity, alpha=0.6, frame_stacks=self.frame_stacks)
        self.bytes_per_item = self.r.bytes_per_item

    def add(self, items, priorities):
        self.r.add(items, priorities)

    def sample_update(self, rng):
        b = self.r.sample(512, beta=0.4)
        self.r.update_priorities(b.slots, rng.random(512))


class DistrlFramesBuffer(DistrlBuffer):
    name = "distrl, frames shared"
    frame_stacks = ("obs", "next_obs")


class CpprbBuffer:
    name = "cpprb"

    def __init__(self, capacity, obs_shape, obs_dtype):
        from cpprb import PrioritizedReplayBuffer

        self.r = PrioritizedReplayBuffer(capacity, {"obs": {"shape": obs_shape, "dtype": obs_dtype},
                                                    "action": {"dtype": np.int64}, "reward": {}, "discount": {},
                                                    "next_obs": {"shape": obs_shape, "dtype": obs_dtype}}, alpha=0.6)
        self.bytes_per_item = 2 * int(np.prod(obs_shape)) * np.dtype(obs_dtype).itemsize + 8 + 4 + 4 + 8

    def add(self, items, priorities):
        self.r.add(**items, priorities=priorities)

    def sample_update(self, rng):
        s = self.r.sample(512, beta=0.4)
        self.r.update_priorities(s["indexes"], rng.random(512))


class TianshouBuffer:
    """tianshou's PrioritizedReplayBuffer: its ``add`` takes one transition (new ones get the maximum
    priority), so a chunk of 64 is 64 calls, as a tianshou collector makes them."""

    name = "tianshou"

    def __init__(self, capacity, obs_shape, obs_dtype):
        from tianshou.data import Batch, PrioritizedReplayBuffer

        self.batch = Batch
        self.r = PrioritizedReplayBuffer(capacity, alpha=0.6, beta=0.4)
        self.bytes_per_item = 2 * int(np.prod(obs_shape)) * np.dtype(obs_dtype).itemsize + 8 + 4 + 1 + 1 + 8

    def add(self, items, priorities):
        for i in range(len(items["action"])):
            self.r.add(self.batch(obs=items["obs"][i], act=items["action"][i], rew=items["reward"][i], terminated=False,
                                  truncated=False, obs_next=items["next_obs"][i], info={}))

    def sample_update(self, rng):
        _, indices = self.r.sample(512)
        self.r.update_weight(indices, rng.random(512))


def bench(cls, capacity, obs_shape, obs_dtype, seconds):
    rng = np.random.default_rng(0)
    t0 = time.perf_counter()
    buf = cls(capacity, obs_shape, obs_dtype)
    alloc_s = time.perf_counter() - t0
    if len(obs_shape) == 3:  # pixels: consecutive frame stacks, as actors send them
        chunks = stream_chunks(40, rng)
    else:
        chunks = [transitions(64, obs_shape, obs_dtype, rng)]
    prios = rng.random(64) + 0.1
    t0 = time.perf_counter()
    inserted = 0
    while inserted < capacity:  # the first fill, page faults included
        buf.add(chunks[(inserted // 64) % len(chunks)], prios)
        inserted += 64
    first_fill = time.perf_counter() - t0
    t0, n = time.perf_counter(), 0
    while time.perf_counter() - t0 < seconds:  # steady state: overwriting the oldest
        buf.add(chunks[(n // 64) % len(chunks)], prios)
        n += 64
    insert_rate = n / (time.perf_counter() - t0)
    t0, k = time.perf_counter(), 0
    while time.perf_counter() - t0 < seconds:
        buf.sample_update(rng)
        k += 1
    su_rate = k / (time.perf_counter() - t0)
    row = (cls.name, capacity, "x".join(map(str, obs_shape)) + f" {np.dtype(obs_dtype).name}", insert_rate, su_rate,
           buf.bytes_per_item, alloc_s, first_fill)
    del buf
    gc.collect()
    return row


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--pixels", action="store_true", help="also 100k x 4x84x84 uint8 (about 5.6 GB per buffer)")
    p.add_argument("--seconds", type=float, default=3.0)
    add_flag(p)
    args = p.parse_args()
    if args.readme and not args.pixels:
        p.error("--readme replaces the docs' full table, pixel rows included: add --pixels")
    writer = start(["replay"], p, args)
    cases = [(1_000_000, (4,), np.float32)]
    if args.pixels:
        cases.append((100_000, (4, 84, 84), np.uint8))
    rows = []
    for capacity, shape, dtype in cases:
        others = (CpprbBuffer, TianshouBuffer)
        for cls in (DistrlBuffer, DistrlFramesBuffer, *others) if len(shape) == 3 else (DistrlBuffer, *others):
            try:
                rows.append(bench(cls, capacity, shape, dtype, args.seconds))
            except ImportError as e:
                print(f"{cls.name} is not installed ({e}): pip install -e '.[bench]'")
                continue
            print(rows[-1], flush=True)
    lines = ["| buffer | capacity | observation | inserts/s (chunks of 64) | sample(512)+update(512)/s "
             "| bytes/transition | allocate s | first fill s |", "|---|---|---|---|---|---|---|---|"]
    lines += [f"| {name} | {cap:,} | {obs} | {ins:,.0f} | {su:,.0f} | {bpi:,.0f} | {alloc:.2f} | {fill:.2f} |"
              for name, cap, obs, ins, su, bpi, alloc, fill in rows]
    print("\n" + "\n".join(lines))
    if writer:
        writer.write({"replay": "\n".join(lines)})


if __name__ == "__main__":
    main()
