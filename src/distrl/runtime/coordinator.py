"""The coordinator: runs the learner loop over any backend and owns the run directory.

The loop is the same for every runtime: take a batch (timing the wait), update, publish
weights, account env steps, episodes and policy lag, write a metrics row every interval and a
checkpoint every few seconds. Ctrl-C or SIGTERM ends the loop cleanly: a final checkpoint is
written and the backend stops every process it started.
"""

from __future__ import annotations

import importlib
import json
import math
import signal
import time
from pathlib import Path
from typing import Any

import numpy as np

from distrl.core.types import Topology
from distrl.runtime.checkpoint import latest_checkpoint, load_checkpoint, save_checkpoint
from distrl.runtime.metrics import EpisodeStats, MetricsWriter, bottleneck, inference_bottleneck
from distrl.runtime.progress import Progress


_BACKENDS = {  # (runtime, central inference server?) -> where the backend class lives
    ("inline", False): ("distrl.runtime.inline", "InlineBackend"),
    ("local", False): ("distrl.runtime.local", "LocalBackend"),
    ("ray", False): ("distrl.runtime.ray_backend", "RayBackend"),
    ("inline", True): ("distrl.runtime.inference_inline", "InlineInferenceBackend"),
    ("local", True): ("distrl.runtime.inference_local", "LocalInferenceBackend"),
    ("ray", True): ("distrl.runtime.inference_ray", "RayInferenceBackend"),
}


def make_backend(runtime: str, topology: Topology, run_cfg):
    """The backend for ``runtime``; topologies with an inference server (SEED RL) get its variant.
    Imported on demand, so ``inline`` and ``local`` never import Ray or gRPC."""
    key = (runtime, topology.inference is not None)
    if key not in _BACKENDS:
        raise ValueError(f"unknown runtime {runtime!r}")
    module, name = _BACKENDS[key]
    cls = getattr(importlib.import_module(module), name)
    extra = {"inline": (), "local": (run_cfg.torch_threads,), "ray": (run_cfg.torch_threads, run_cfg.ray_address)}[runtime]
    return cls(topology, run_cfg.seed, *extra)


class _StopRequested(Exception):
    pass


class Coordinator:
    def __init__(self, system: str, topology: Topology, run_cfg, run_dir: Path, *, resume: bool = False,
                 progress: bool = True):
        self.system = system
        self.topology = topology
        self.cfg = run_cfg
        self.run_dir = Path(run_dir)
        self.resume = resume
        self.progress_enabled = progress

    def run(self) -> dict[str, Any]:
        cfg = self.cfg
        learner = self.topology.make_learner()
        counters = {"env_steps": 0, "wall_s": 0.0, "updates": 0, "actor_restarts": 0, "episodes": {}}
        ckpt_dir = self.run_dir / "checkpoints"
        if self.resume and (last := latest_checkpoint(ckpt_dir)) is not None:
            modules, optimizers = learner.checkpoint_parts()
            saved = load_checkpoint(last, modules, optimizers)
            counters.update(saved)
            learner.load_counters(saved.get("learner", {}))
            if hasattr(learner, "load_state"):
                learner.load_state(last)
        episodes = EpisodeStats()
        episodes.load(counters.get("episodes", {}))
        env_steps, updates, restarts = counters["env_steps"], counters["updates"], counters["actor_restarts"]
        wall_offset = counters["wall_s"]

        backend = make_backend(cfg.runtime, self.topology, cfg)
        writer = MetricsWriter(self.run_dir)
        progress = Progress(cfg.total_steps, f"{self.system} {cfg.env}", env_steps, enabled=self.progress_enabled)
        old_term = signal.signal(signal.SIGTERM, _raise_stop)
        totals = dict(wait_s=0.0, learn_s=0.0, publish_s=0.0, env_s=0.0, infer_s=0.0, worker_learn_s=0.0)
        interval = _new_interval()
        lags_all: list[float] = []
        t_start = time.perf_counter()
        last_log = last_ckpt = t_start
        error: BaseException | None = None
        interrupted = False

        def wall() -> float:
            return wall_offset + time.perf_counter() - t_start

        def checkpoint() -> None:
            if hasattr(backend, "sync_learner"):  # parameters held elsewhere (a Ray parameter server)
                backend.sync_learner(learner)
            modules, optimizers = learner.checkpoint_parts()
            save_checkpoint(ckpt_dir, env_steps, modules, optimizers,
                            {"env_steps": env_steps, "wall_s": wall(), "updates": updates, "actor_restarts": restarts,
                             "episodes": episodes.state(), "learner": learner.counters()}, keep=cfg.keep_checkpoints,
                            extra=getattr(learner, "save_state", None))

        try:
            backend.start(learner)
            backend.publish(learner.get_weights, learner.version)
            t_start = time.perf_counter()  # process start-up is not training time
            last_log = last_ckpt = t_start
            while env_steps < cfg.total_steps:
                if cfg.max_wall_s is not None and time.perf_counter() - t_start >= cfg.max_wall_s:
                    break
                t0 = time.perf_counter()
                item = backend.next_batch()
                restarts += backend.poll()
                if item is None:
                    totals["wait_s"] += time.perf_counter() - t0
                    interval["wait_s"] += time.perf_counter() - t0
                    continue
                batch, infos, handle = item
                t1 = time.perf_counter()
                version = learner.version
                metrics = learner.step(batch)
                backend.release(handle)
                t2 = time.perf_counter()
                backend.publish(learner.get_weights, learner.version)
                t3 = time.perf_counter()
                updates += 1
                for key, dt in (("wait_s", t1 - t0), ("learn_s", t2 - t1)):
                    totals[key] += dt
                    interval[key] += dt
                totals["publish_s"] += t3 - t2
                interval["publish_s"] += t3 - t2
                for info in infos:
                    env_steps += info["env_steps"]
                    interval["steps"] += info["env_steps"]
                    # policy lag: versions between the weights that made the data and the ones it trains;
                    # gradient-sharing workers measure it themselves (updates by others since their pull)
                    interval["lag"].append(info["staleness"] if "staleness" in info else version - info["version"])
                    episodes.add(info["episode_returns"], info["episode_lengths"])
                    totals["worker_learn_s"] += info.get("learn_s", 0.0)
                    for key in ("env_s", "infer_s"):
                        totals[key] += info.get(key, 0.0)
                        interval[key] += info.get(key, 0.0)
                    for key, value in info.items():  # anything else numeric an actor reports becomes a column
                        if key not in _ACCOUNTED and isinstance(value, (int, float)) and not isinstance(value, bool):
                            interval["metrics"].setdefault(f"actor_{key}", []).append(value)
                for k, v in metrics.items():
                    interval["metrics"].setdefault(k, []).append(v)
                now = time.perf_counter()
                if now - last_log >= cfg.log_interval_s:
                    if hasattr(backend, "sync_learner"):  # remote parameter servers: refresh the counts
                        backend.sync_learner(learner)
                    row = self._row(env_steps, wall(), now - last_log, interval, episodes, updates, restarts)
                    if hasattr(backend, "metrics"):  # e.g. inference batch size and latency (SEED)
                        row.update(backend.metrics())
                    lags_all.extend(interval["lag"])
                    writer.write(row)
                    progress.update(env_steps, row["sps"], episodes.mean_return)
                    interval = _new_interval()
                    last_log = now
                if now - last_ckpt >= cfg.checkpoint_interval_s:
                    checkpoint()
                    last_ckpt = time.perf_counter()
        except (KeyboardInterrupt, _StopRequested):
            interrupted = True
        except BaseException as e:  # a learner error ends the run; the last checkpoint stays
            error = e
        finally:
            signal.signal(signal.SIGTERM, old_term)
            progress.update(env_steps, (env_steps - counters["env_steps"]) / max(time.perf_counter() - t_start, 1e-9),
                            episodes.mean_return)
            progress.close()
            actor_stats = backend.actor_stats() if hasattr(backend, "actor_stats") else {}
            run_metrics = backend.metrics(whole_run=True) if hasattr(backend, "metrics") else {}
            if error is None and hasattr(backend, "sync_learner"):
                try:
                    backend.sync_learner(learner)
                except Exception:
                    pass
            if error is None and hasattr(backend, "return_state"):  # e.g. a replay served by a Ray actor
                backend.return_state(learner)
            backend.close()
        if error is not None:
            writer.close()
            raise error
        if interval["steps"]:
            now = time.perf_counter()
            writer.write(self._row(env_steps, wall(), now - last_log, interval, episodes, updates, restarts))
            lags_all.extend(interval["lag"])
        writer.close()
        checkpoint()
        session_s = time.perf_counter() - t_start
        learner_total = totals["wait_s"] + totals["learn_s"] + totals["publish_s"]
        wait_frac = totals["wait_s"] / learner_total if learner_total > 0 else float("nan")
        nodes = actor_stats.pop("nodes", None)
        dropped = actor_stats.pop("unrolls_dropped", None)
        actor_time = max(totals["env_s"] + totals["infer_s"] + actor_stats.get("block_s", 0.0)
                         + actor_stats.get("transport_s", 0.0), 1e-9)
        block_frac = actor_stats.get("block_s", 0.0) / actor_time
        transport_frac = (actor_stats.get("transport_s", 0.0) + totals["publish_s"]) / (actor_time + learner_total)
        if self.topology.shared_model:  # workers learn themselves: split their time instead
            work = max(totals["env_s"] + totals["infer_s"] + totals["worker_learn_s"], 1e-9)
            grad_frac = totals["worker_learn_s"] / work
            verdict = "learner-bound" if grad_frac >= 0.5 else "actor-bound"
            numbers = (f"workers spend {1 - grad_frac:.0%} of their busy time stepping envs and choosing actions "
                       f"and {grad_frac:.0%} computing and applying gradients")
        elif self.topology.inference is not None and "actor_idle_frac" in run_metrics:
            verdict, numbers = inference_bottleneck(wait_frac, run_metrics["actor_idle_frac"])
        else:
            verdict, numbers = bottleneck(wait_frac, block_frac, transport_frac)
        summary = {
            "system": self.system, "env": cfg.env, "runtime": cfg.runtime,
            "env_steps": env_steps, "wall_s": round(wall(), 3),
            "sps": round((env_steps - counters["env_steps"]) / max(session_s, 1e-9), 1),
            "episode_return_mean": _num(episodes.mean_return), "episodes": episodes.count,
            "learner_updates": updates, "learner_wait_frac": _num(wait_frac),
            "policy_lag_mean": _num(float(np.mean(lags_all)) if lags_all else float("nan")),
            "actor_restarts": restarts, "bottleneck": verdict, "bottleneck_detail": numbers,
            "time_split_s": {k: round(v, 3) for k, v in {**totals, **{f"actor_{k}": v for k, v in actor_stats.items()}}.items()},
            "interrupted": interrupted,
        }
        summary.update({k: _num(v) for k, v in run_metrics.items()})
        if dropped is not None:
            summary["unrolls_dropped"] = dropped
        if nodes is not None:
            summary["actor_nodes"] = nodes
        (self.run_dir / "summary.json").write_text(json.dumps(summary, indent=1))
        return summary

    def _row(self, env_steps, wall_s, dt, interval, episodes, updates, restarts) -> dict[str, Any]:
        busy = interval["wait_s"] + interval["learn_s"]
        row = {"env_steps": env_steps, "wall_s": wall_s, "sps": interval["steps"] / max(dt, 1e-9),
               "episode_return_mean": episodes.mean_return, "episodes": episodes.count, "learner_updates": updates,
               "learner_wait_frac": interval["wait_s"] / busy if busy > 0 else float("nan"),
               "policy_lag_mean": float(np.mean(interval["lag"])) if interval["lag"] else float("nan"),
               "actor_restarts": restarts}
        # where the time went in this interval (actor seconds are summed over actors)
        row.update({"time_env_s": interval["env_s"], "time_inference_s": interval["infer_s"],
                    "time_learn_s": interval["learn_s"], "time_wait_s": interval["wait_s"],
                    "time_transport_s": interval["publish_s"]})
        for k, v in interval["metrics"].items():
            row[k] = float(np.mean(v))
        return row


_ACCOUNTED = {"env_steps", "version", "episode_returns", "episode_lengths", "env_s", "infer_s", "pid", "seed", "actor_index"}


def _new_interval() -> dict:
    return dict(steps=0, wait_s=0.0, learn_s=0.0, publish_s=0.0, env_s=0.0, infer_s=0.0, lag=[], metrics={})


def _raise_stop(signum, frame):
    raise _StopRequested()


def _num(x: float):
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else round(float(x), 4)
