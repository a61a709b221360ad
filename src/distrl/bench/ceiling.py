"""This machine's ceiling for a system, measured in the benchmark's own run: actors alone, learner alone.

(a) *Actors alone*: ``n`` processes, each stepping one component of the system's acting role (its actor,
A3C's worker, GORILA's bundle, SEED's env actor with its inference in-process) as fast as it can, its
services in its own process and its output dropped: no learner, no transport. A3C's and GORILA's workers
learn themselves, so theirs includes their gradients. ES's actor steps its population's env copies until the
last episode ends, the finished ones with the rest: its ``slot_steps`` (every copy stepped) are counted, the rate
at full occupancy, which the trained run reaches (every episode to the cap) and the initial policy does not.
(b) *Learner alone*: a short ``inline`` run of the same config (one process; components take turns, so the
learner's time is its own): env steps the run consumed per second of the learner's time, once it has begun
to update (a replay's warm-up is left out). Learning that components do for the learner counts as learner time
(QT-Opt's Bellman updaters compute the targets, CEM over the target networks: the expensive half of its
Q-learning step; its trainer alone would flatter the ceiling several times over). Replay learners are paced by
their rate limiter, so this is the env-step rate the learner alone could keep up with at the system's replay
ratio.

The combined ceiling is 1 / (1/a + 1/b): on a machine whose cores are all busy, acting and learning share
the CPU (``benchmarks/throughput.py``'s definition). For a run on ``inline``, whose components take turns in
one process, (a) is measured with one process. A system without a learner (A3C, GORILA) has (a) only. With
fewer actors than cores, actors and learner overlap, so a run can exceed 1.
"""

from __future__ import annotations

import multiprocessing as mp
import tempfile
import time
from pathlib import Path


def actor_count(system: str, settings: dict) -> int | None:
    """The run's acting components (``num_actors``), or None for a system with one actor by design (A2C)."""
    import dataclasses

    from distrl.agents.registry import get_system

    fields = {f.name: f.default for f in dataclasses.fields(get_system(system).Config)}
    return int(settings.get("num_actors", fields["num_actors"])) if "num_actors" in fields else None


_barrier = None  # set in each pool process: the timed windows of all acting processes start together


def _set_barrier(barrier) -> None:
    global _barrier
    _barrier = barrier


def _acting_worker(args) -> float:
    system, env, settings, index, seconds = args
    from distrl.api import plan_run
    from distrl.runtime.backends.inline import InlineBackend
    from distrl.runtime.compute import setup_compute

    setup_compute(1)  # as in the run it is the ceiling of
    one = {"num_actors": 1} if actor_count(system, settings) is not None else {}
    program = plan_run(system, env, **{**settings, **one, "runtime": "inline"})[4]
    backend = InlineBackend(seed=1000 * (index + 1))
    backend.open(program)
    backend.start(None)
    try:
        role = next(r for r in program.roles if r.interval_steps is None)
        worker = next(w for w in backend.workers if w.role is role)
        out = worker.buffers[0] if worker.buffers else None
        worker.handle.step(out)  # warm-up: first env resets, first forward
        if _barrier is not None:  # all processes measure the same window: each shares the CPU with the others
            _barrier.wait(timeout=120)
        steps, t0 = 0, time.perf_counter()
        while time.perf_counter() - t0 < seconds:
            info = worker.handle.step(out)
            steps += info.get("slot_steps", info.get("env_steps", 0))
            steps += _drop_served(backend)
        return steps / (time.perf_counter() - t0)
    finally:
        backend.close()


def _drop_served(backend) -> int:
    """Env steps in what an inference server assembled (SEED counts its actors' steps there), then drops it."""
    steps = 0
    for adapter in backend.adapters.values():
        ready = getattr(adapter, "ready", None)
        if isinstance(ready, list) and ready:
            steps += sum(info.get("env_steps", 0) for _, info in ready)
            ready.clear()
    return steps


def actors_alone(system: str, env: str, settings: dict, n: int, seconds: float) -> float:
    """Env steps/s of ``n`` acting components in ``n`` processes over the same window, summed."""
    ctx = mp.get_context("spawn")
    with ctx.Pool(n, initializer=_set_barrier, initargs=(ctx.Barrier(n),)) as pool:
        return float(sum(pool.map(_acting_worker, [(system, env, settings, i, seconds) for i in range(n)])))


def learner_alone(system: str, env: str, settings: dict, seconds: float, most_s: float = 120.0) -> float | None:
    """Env steps consumed per second of the learner's own time (its updates, and the learning components do for
    it) in a short ``inline`` run, over whole iterations after the first update (a replay's warm-up and the first
    batch left out) for at least ``seconds``; None when no update came within ``most_s``. Whole iterations, not a
    fixed window: a window shorter than two of the system's batches (A2C's default, 16 x 1024 env steps, takes
    ~1 s of learning a batch here) would see no learning at all, on a busy machine or a fast one alike."""
    import distrl

    with tempfile.TemporaryDirectory() as tmp:
        trainer = distrl.make_trainer(system, env=env, runtime="inline", total_steps=10**12,
                                      max_wall_s=most_s + 2 * seconds, log_interval_s=10**6,
                                      checkpoint_interval_s=10**6, run_dir=str(Path(tmp) / "run"), **settings)
        rate = None
        try:
            trainer.start()
            t_start = time.perf_counter()
            trainer.step(updates=1)
            if trainer.updates > 0 and time.perf_counter() - t_start <= most_s:  # else most_s went to a warm-up
                steps0, learn0, t0 = trainer.env_steps, _learn_s(trainer), time.perf_counter()
                while not trainer.done and time.perf_counter() - t0 < seconds:
                    trainer.step(updates=1)
                steps, learn = trainer.env_steps - steps0, _learn_s(trainer) - learn0
                rate = steps / learn if learn > 0 and steps > 0 else None
        except BaseException:  # a stop signal (KeyboardInterrupt) or an error: close without the summary's syncs
            trainer.close(failed=True)
            raise
        trainer.close()
        return rate


def _learn_s(trainer) -> float:
    return trainer.ledger.totals.learn_s + trainer.ledger.totals.worker_learn_s


def measure(system: str, env: str, settings: dict, n: int, seconds: float, has_learner: bool,
            runtime: str = "local") -> dict:
    """The ceiling for a run of ``n`` acting components on ``runtime``: 1 / (1/a + 1/b). Off ``inline``, a is
    measured with ``n`` processes; on ``inline`` the n components take turns in one process, so together they
    step at one process's rate: a is measured with one. ``learner_missing``: the system has a learner whose
    rate could not be measured; the ceiling is then None (not the actors' alone, which would flatter the run)."""
    inline = runtime == "inline"
    a = actors_alone(system, env, settings, 1 if inline else n, seconds)
    b = learner_alone(system, env, settings, seconds) if has_learner else None
    if has_learner:
        combined = 1.0 / (1.0 / a + 1.0 / b) if a and b else None
    else:
        combined = a
    return {"actors": n, "processes": 1 if inline else n, "actors_alone_sps": a, "learner_alone_sps": b,
            "ceiling_sps": combined, "learner_missing": has_learner and b is None, "seconds": seconds}
