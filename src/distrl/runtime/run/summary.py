"""A run's ``summary.json``: what it did (env steps, updates, the return), how fast, and where the time went, with
the bottleneck verdict (``accounting.verdict``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from distrl.core.program import Inference
from distrl.runtime.run.accounting import feeders, num, verdict


def summarise(trainer, actor: dict, services: dict) -> dict[str, Any]:
    """The summary of ``trainer``'s run so far; ``actor`` and ``services``: the backend's and its services' whole-run
    stats (both consumed: what the summary names itself is taken out of them)."""
    program, ledger = trainer.program, trainer.ledger
    tot, lags, episodes = ledger.totals, ledger.all_lags(), ledger.episodes
    dropped = services.pop("unrolls_dropped", None)
    actor_stats = dict(actor)
    if "actor_wait_s" in services:  # an inference server: actors blocked waiting for actions
        actor_stats["block_s"] = services.pop("actor_wait_s")
    nodes = actor_stats.pop("nodes", None)
    roles = actor_stats.pop("roles", {})
    served = any(isinstance(s, Inference) for s in program.services.values())
    name, numbers, wait_frac = verdict(tot, actor_stats, services, trainer.learner is None, served,
                                       feeders(program, roles), one_process=trainer.cfg.runtime == "inline")
    stats = trainer.stats()
    split = {"startup_s": tot.startup_s, "wait_s": tot.wait_s, "learn_s": tot.learn_s, "publish_s": tot.publish_s,
             "env_s": tot.env_s, "infer_s": tot.infer_s, "worker_learn_s": tot.worker_learn_s}
    lag = float(np.mean(lags)) if lags else float("nan")
    summary = {
        "system": trainer.system,
        "env": trainer.cfg.env,
        "runtime": trainer.cfg.runtime,
        "env_steps": trainer.env_steps,
        "wall_s": round(trainer.wall_s, 3),
        "sps": round(stats["sps"], 1),
        "episode_return_mean": num(episodes.mean_return),
        "episodes": episodes.count,
        "learner_updates": trainer.updates,
        "learner_wait_frac": num(wait_frac),
        "policy_lag_mean": num(lag),
        # the same lag as env steps of data (updates times env steps per update): PPO's passes make a version of
        # every minibatch, so a lag of many versions can be one batch
        "policy_lag_env_steps": num(lag * trainer.env_steps / trainer.updates if lags and trainer.updates
                                    else float("nan")),
        "actor_restarts": trainer.restarts,
        "bottleneck": name,
        "bottleneck_detail": numbers,
        "time_split_s": {k: round(v, 3) for k, v in {**split, **{f"actor_{k}": v for k, v in actor_stats.items()}}
                         .items()},
        # per role, summed over its components (local runtime): seconds in step, seconds waiting for a grant
        "role_time_s": {r: {k: round(v, 3) for k, v in t.items()} for r, t in roles.items()},
        "interrupted": trainer.interrupted,
        "run_dir": str(trainer.run_dir),
        "clock_started_at": round(trainer.started_at, 3),
        # between processes, this session: outputs and weights pulled (not parameter-server or SEED stream traffic)
        "bytes_per_env_step": num(tot.transport_bytes / max(trainer.env_steps - trainer.steps_at_start, 1)),
    }
    if trainer.stopped:
        summary["stopped"] = trainer.stopped
    summary.update({k: num(v) for k, v in services.items()})
    for key, (total, count) in ledger.sums.items():
        summary[f"{key}_mean"] = num(total / count) if count else None
    if dropped is not None:
        summary["unrolls_dropped"] = dropped
    if nodes is not None:
        summary["actor_nodes"] = nodes
    return summary
