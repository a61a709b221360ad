"""The trainer: runs a program on a backend, one iteration at a time, and owns the run directory.

    trainer = Trainer(program, run_cfg, run_dir, system="impala", observers=[...])
    trainer.start()                      # services, learner (restored on resume), components
    trainer.step(updates=100)            # or env_steps=..., or run() to the end of the budget
    trainer.set_hyperparameters(lr=1e-3) # the one mutation point: learner, services, components
    trainer.stats(); trainer.pause(); trainer.close()   # close() returns the summary

An iteration is the same on every backend: collect what components reported (timing the wait),
take a batch from the consumed channel (or let the learner sample its replays), update, publish
weights, account env steps, episodes and policy lag, request periodic roles (an evaluation) when
due. Metrics rows, checkpoints and the progress display are observers. Ctrl-C or SIGTERM ends
``run`` cleanly: a final checkpoint is written and the backend stops every process it started.
"""

from __future__ import annotations

import copy
import json
import signal
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from distrl.core.program import Inference, Program
from distrl.errors import ConfigError, RunStopped
from distrl.models.device import WeightsToHost, resolve_device
from distrl.runtime.backends import make_backend
from distrl.runtime.learners import LearnerGroup, ShardingReplay, for_learners
from distrl.runtime.run.accounting import Interval, feeders, num, row, verdict
from distrl.runtime.run.best_policy import BestPolicy, headline, read_best
from distrl.runtime.run.checkpoint import (
    check_counters,
    latest_checkpoint,
    list_checkpoints,
    load_checkpoint,
    save_checkpoint,
)
from distrl.runtime.run.metrics import EpisodeStats

NONFINITE_LIMIT = 25  # updates skipped in a row (or gradients by one worker) before a run stops


class _StopRequested(Exception):
    pass


class Trainer:
    def __init__(self, program: Program, run_cfg, run_dir: str | Path, *, system: str, resume: bool = False,
                 observers: tuple = (), identity: dict | None = None, former_identity: dict | None = None,
                 on_ready=None, token: str = ""):
        """``identity`` (system, env, spaces) is written into every checkpoint and checked on resume (where a
        checkpoint may also say ``former_identity``'s values: a run saved under a system's former name);
        ``on_ready()`` runs once the services, the learner and a resumed checkpoint have all loaded."""
        self.identity = identity or {"system": system, "env": run_cfg.env}
        self.former_identity = former_identity or {}
        self.on_ready = on_ready
        self.token = token  # the run's secret for peers that connect over the network (never in config.yaml)
        self.program, self.cfg, self.system = program, run_cfg, system
        self.run_dir = Path(run_dir)
        self.resume = resume
        self.observers = list(observers)
        self.backend = None
        self.learner = None
        self.env_steps = 0
        self.restarts = 0
        self.episodes = EpisodeStats()
        self.totals, self.interval = Interval(), Interval()
        self.lags: list[float] = []
        self.base = {k: h.value for k, h in program.hyperparameters.items()}
        self._applied: dict[str, float] = {}
        self._wall_offset = 0.0
        self._steps_at_start = 0
        self._due = {r.name: r.interval_steps for r in program.roles if r.interval_steps}
        self._idle = False
        self._published = self._first_version = -1
        self._t_start = self._last_row = None
        self._nonfinite_seen, self._nonfinite_streak = 0, 0
        self._held: list = []  # consumed slots not yet given back (batches_per_version)
        self._useful = 0  # batches consumed that were made from the learner's current version
        self._capacity = sum(r.count * r.in_flight for r in program.producers(program.consumes)) \
            if program.consumes else 0
        self.interrupted = False
        self.stopped: str | None = None
        self._paced = [r for r in program.roles if r.env_steps_per_update is not None]
        self._held_roles: frozenset[str] = frozenset()
        self._summary_sums = {k: [0.0, 0] for k in program.summary_metrics}  # whole-session means for summary.json
        self._to_host: WeightsToHost | None = None  # overlap_transfers: weights leave the device without a wait
        self._stager: ThreadPoolExecutor | None = None  # overlap_transfers: stages the next batch while an update runs
        self._ahead = None  # the next batch's staging (a future), taken by the iteration after
        self._prefetching = False  # overlap_transfers=on: the learner, sampling its replays, draws ahead itself
        self._best: BestPolicy | None = None  # run_dir/best, opened when an evaluator first offers weights

    # --- life cycle ------------------------------------------------------------------------------
    def start(self) -> None:
        cfg = self.cfg
        self.backend = make_backend(cfg.runtime, cfg.seed, cfg.torch_threads, cfg.ray_address, cfg.step_timeout_s,
                                    cfg.max_restarts, self.token)
        if cfg.num_learners > 1:  # each learner takes a batch of the program's size
            self.program = for_learners(self.program, cfg.num_learners)
        handles = dict(self.backend.open(self.program))
        shared = [ShardingReplay(handles[name]) for name in self.program.learner_uses] if cfg.num_learners > 1 else []
        handles.update(zip(self.program.learner_uses, shared))
        self.learner = self.program.make_learner(handles) if self.program.make_learner else None
        device = resolve_device(cfg.device)
        if self.learner is not None and (device.type != "cpu" or cfg.precision != "fp32"):
            self.learner.place(device, cfg.precision)  # before a checkpoint loads into it
        if self.resume:
            last = latest_checkpoint(self.run_dir / "checkpoints")
            if last is None:
                raise ConfigError(f"cannot resume '{self.run_dir}': it holds no loadable checkpoint")
            self._restore(last)
        if cfg.num_learners > 1:  # the replicas start from the restored state
            self.learner = LearnerGroup.start(self.learner, self.program, shared, cfg.num_learners, device,
                                              cfg.precision, cfg.torch_threads, cfg.step_timeout_s, cfg.runtime)
        if self.learner is not None and overlaps(cfg.overlap_transfers, device, cfg.runtime):
            self._to_host = WeightsToHost(device)
            if self.program.consumes is not None and cfg.num_learners == 1:
                self._stager = ThreadPoolExecutor(1, thread_name_prefix="distrl-stage")
            elif cfg.num_learners == 1 and cfg.overlap_transfers == "on":
                # only when asked for, until measured on a GPU (on this 2-core CPU the extra thread made Ape-X
                # DQN's CartPole run 20.2 -> 25.7 s)
                self._prefetching = True
                self.learner.prefetch(True)
        if self.on_ready is not None:  # everything loaded: now the run dir may change (config.yaml)
            self.on_ready()
        self._push_hyperparameters(force=True)
        self._nonfinite_seen = self.learner.counters().get("nonfinite_skipped", 0) if self.learner else 0
        weights = (self.learner.get_weights(), self.learner.version) if self.learner else None
        self._published = self._first_version = self.learner.version if self.learner else -1
        for o in self.observers:  # writers and displays open before any worker runs
            o.on_start(self)
        self.backend.start(weights)
        for name, interval in self._due.items():  # the first evaluation after one interval of this session
            self._due[name] = self.env_steps + interval
        self._t_start = self._last_row = time.perf_counter()  # process start-up is not training time
        self._started_at = time.time()  # the same instant on the wall clock: a benchmark's time from its command
        self._steps_at_start = self.env_steps

    def run(self) -> dict[str, Any]:
        """Start, train to the budget (or ``max_wall_s``), close. Ctrl-C, SIGTERM and SIGHUP (a closed
        terminal, a dropped SSH session) end it the same way: a final checkpoint, ``summary.json``, no
        process left behind."""
        previous = {sig: signal.signal(sig, _raise_stop) for sig in _STOP_SIGNALS}
        # Ctrl-C even where this process was started with SIGINT ignored (a background job of a script, some
        # test runners): Python then installs no KeyboardInterrupt handler of its own
        previous[signal.SIGINT] = signal.signal(signal.SIGINT, signal.default_int_handler)
        stopped = None
        try:
            self.start()
            self.step()
        except (KeyboardInterrupt, _StopRequested):
            self.interrupted = True
        except RunStopped as e:  # a crash loop, non-finite data: ended like an interrupt, then reported
            self.stopped, stopped = str(e), e
        except BaseException:  # a learner error ends the run; the last checkpoint stays
            self._restore_signals(previous)
            self.close(failed=True)
            raise
        for sig in _STOP_SIGNALS:  # one stop is enough: the close below must not be cut short
            signal.signal(sig, signal.SIG_IGN)
        try:
            summary = self.close(failed=not self.started)
        finally:
            self._restore_signals(previous)
        if stopped is not None:
            raise stopped
        if summary is None:  # interrupted before training began: nothing to sum up
            raise KeyboardInterrupt
        return summary

    @staticmethod
    def _restore_signals(previous: dict) -> None:
        for sig, handler in previous.items():
            signal.signal(sig, handler)

    def step(self, updates: int | None = None, env_steps: int | None = None) -> dict[str, Any]:
        """Run iterations until ``updates`` more learner updates or ``env_steps`` more env steps (or, with
        neither, the run's budget) are done; stop early at the budget or ``max_wall_s``."""
        u0, s0 = self.updates, self.env_steps
        while not self.done:
            if updates is not None and self.updates - u0 >= updates:
                break
            if env_steps is not None and self.env_steps - s0 >= env_steps:
                break
            self._iterate()
        return self.stats()

    @property
    def started(self) -> bool:
        """Did :meth:`start` finish (components running, training under way)?"""
        return self._t_start is not None

    @property
    def done(self) -> bool:
        cfg = self.cfg
        if self.program.max_updates is not None:  # steps no env (offline): the budget is learner updates
            if self.updates >= self.program.max_updates:
                return True
        elif self.env_steps >= cfg.total_steps:
            return True
        return cfg.max_wall_s is not None and time.perf_counter() - self._t_start >= cfg.max_wall_s

    def pause(self, paused: bool = True) -> None:
        """Stop (or resume) granting components new steps; what is in flight still arrives."""
        self.backend.pause(paused)

    def close(self, failed: bool = False) -> dict[str, Any] | None:
        """Stop every component; write the last row, checkpoint and ``summary.json``; return the summary."""
        backend = self.backend
        if backend is None or self._t_start is None:  # start() itself failed: nothing ran
            try:
                for o in self.observers:
                    o.on_close(self, None)
            finally:
                self._close_learner()  # before the backend: on ray, its replicas are actors of the backend's instance
                if backend is not None:
                    backend.close()
            return None
        actor, services = {}, {}
        try:
            actor = backend.stats()
            for adapter in backend.services().values():
                services.update(adapter.stats(whole_run=True))
            if not failed:
                for adapter in backend.services().values():
                    adapter.sync()
        finally:
            summary = None if failed else self._summary(actor, services)
            if not failed and self.interval.steps:
                self._emit_row(time.perf_counter())
            try:
                for o in self.observers:
                    o.on_close(self, summary)
            finally:
                self._close_learner()
                backend.close()
        if summary is not None:
            (self.run_dir / "summary.json").write_text(json.dumps(summary, indent=1))
        return summary

    def _close_learner(self) -> None:
        if self._stager is not None:  # a batch being staged finishes first (its arrays are slot views)
            self._stager.shutdown(wait=True)
            self._stager = self._ahead = None
        elif self._prefetching:
            self.learner.prefetch(False)
        close = getattr(self.learner, "close", None)  # several learners: their processes end with the run
        if close is not None:
            close()

    # --- the one mutation point ------------------------------------------------------------------
    def set_hyperparameters(self, **values: float) -> None:
        """Change base values of the program's hyperparameters (schedules scale them); they reach the
        learner, the services and the components on every backend."""
        unknown = set(values) - set(self.base)
        if unknown:
            raise KeyError(f"not a hyperparameter of this program: {', '.join(sorted(unknown))} "
                           f"(valid: {', '.join(sorted(self.base))})")
        self.base.update({k: float(v) for k, v in values.items()})
        self._push_hyperparameters(force=True)

    @property
    def hyperparameters(self) -> dict[str, float]:
        return dict(self.base)

    def _push_hyperparameters(self, force: bool = False) -> None:
        if not self.base:
            return
        progress = self.progress
        now = {k: h.at(progress, self.base[k]) for k, h in self.program.hyperparameters.items()}
        changed = {k: v for k, v in now.items() if force or self._applied.get(k) != v}
        if not changed:
            return
        self._applied.update(changed)
        if self.learner is not None:
            self.learner.set_hyperparameters(changed)
        if self.backend is not None:
            to_components = {k: v for k, v in changed.items() if self.program.hyperparameters[k].components}
            self.backend.set_hyperparameters(changed, to_components)

    @property
    def progress(self) -> float:
        """How far through its budget the run is (what schedules scale with)."""
        if self.program.max_updates is not None:
            return self.updates / max(self.program.max_updates, 1)
        return self.env_steps / max(self.cfg.total_steps, 1)

    def _pace(self) -> None:
        """Hold back the paced roles whose env steps ran ahead of the learner (``Role.env_steps_per_update``)."""
        held = frozenset(r.name for r in self._paced
                         if self.env_steps > r.free_env_steps + r.env_steps_per_update * self.learner.version)
        if held != self._held_roles:
            self._held_roles = held
            self.backend.hold(held)

    # --- one iteration ---------------------------------------------------------------------------
    def _iterate(self) -> None:
        t0 = time.perf_counter()
        if self._to_host is not None:  # the last update's weights, if they reached the host meanwhile
            self._publish_copied(wait=False)
        reports, restarts = self.backend.poll(0.05 if self._idle else 0.0)
        self.restarts += restarts
        version = self.learner.version if self.learner else 0
        for info in reports:
            self._account(info, version)
        if self._paced:
            self._pace()
        metrics, t1, release = None, time.perf_counter(), None
        if self.program.consumes is not None:
            item = self._next_batch(0.0 if reports else 0.05)
            if item is not None:
                batch, infos, token = item
                for info in infos:
                    self._account(info, version)
                self._useful += sum(info.get("version") == version for info in infos)
                self._push_hyperparameters()
                t1 = time.perf_counter()
                metrics = self.learner.step(batch)
                release = token
        elif self.learner is not None:
            self._push_hyperparameters()
            t1 = time.perf_counter()
            metrics = self.learner.step(None)
        else:
            self._push_hyperparameters()
        t2 = time.perf_counter()
        iv, tot = self.interval, self.totals
        if metrics is not None:
            self._watch_nonfinite(metrics.get("nonfinite_skipped"), version)
            iv.wait_s += t1 - t0
            tot.wait_s += t1 - t0
            iv.learn_s += t2 - t1
            tot.learn_s += t2 - t1
            iv.add_metrics(metrics)
            for key, sums in self._summary_sums.items():
                if key in metrics:
                    sums[0] += metrics[key]
                    sums[1] += 1
            if self.learner.version != self._published:
                if self._to_host is not None:  # the previous copy first: this update's sync came after it
                    self._publish_copied(wait=True)
                    self._to_host.start(self.learner.device_weights(), self.learner.version)
                else:
                    self.backend.publish(self.learner.get_weights, self.learner.version)
                self._published = self.learner.version
                dt = time.perf_counter() - t2
                iv.publish_s += dt
                tot.publish_s += dt
        elif self.learner is not None and self.learner.version == self._first_version:  # still starting up
            tot.startup_s += t2 - t0
        else:
            iv.wait_s += t2 - t0
            tot.wait_s += t2 - t0
        if release is not None:  # after the publish: the slots' producers start on the newest weights
            self._release(release, version)
        self._idle = metrics is None and not reports
        for name, due in self._due.items():
            if self.env_steps >= due:
                self.backend.request(name)
                self._due[name] = due + self.program.role(name).interval_steps
        now = time.perf_counter()
        if now - self._last_row >= self.cfg.log_interval_s and (self.interval.steps or self.interval.metrics):
            self._emit_row(now)  # (a row with nothing in it would fix the CSV's columns too early)
        for o in self.observers:
            o.on_step(self)

    def _next_batch(self, timeout: float):
        """(batch, infos, token) from the consumed channel, or None. With ``overlap_transfers`` the batch after
        it, if already delivered, is handed to the staging thread to be copied to the learner's device while
        this one's update runs (its slots held until its own update, like this one's); the next iteration takes
        it staged. A batch nobody staged ahead is staged in the update, as without overlap (learner time)."""
        if self._stager is None:
            return self.backend.next_batch(timeout)
        if self._ahead is not None:
            item, self._ahead = self._ahead.result(), None
        else:
            item = self.backend.next_batch(timeout)
            if item is None:
                return None
        after = self.backend.next_batch(0.0)
        if after is not None:
            self._ahead = self._stager.submit(lambda: (self.learner.stage(after[0]), *after[1:]))
        return item

    def _publish_copied(self, wait: bool) -> None:
        copied = self._to_host.ready(wait)
        if copied is not None:
            self.backend.publish(lambda: copied[0], copied[1])

    def _release(self, token, version_before: int) -> None:
        """Give a consumed slot back to its producer, unless the program counts batches per version and the
        slots still out (computing, or delivered and waiting) already cover what this version needs: then
        hold it until the learner's next version, so that no producer starts work the learner would drop as
        stale (ES: a result from an older theta). The last slot out is never held, so a learner that needs
        more than it counted (a dropped result) always gets it."""
        need = self.program.batches_per_version
        if need is None:
            self.backend.release(token)
            return
        if self.learner.version != version_before:  # a new version: everything held starts on it
            self._useful = 0
            for held in self._held:
                self.backend.release(held)
            self._held.clear()
            self.backend.release(token)
            return
        out = self._capacity - len(self._held) - 1
        if out > 0 and out >= need - self._useful:
            self._held.append(token)
        else:
            self.backend.release(token)

    def _watch_nonfinite(self, skipped, version_before: int) -> None:
        """Updates skipped for non-finite values in a row stop the run (the last checkpoint with finite
        weights is kept: pruning never deletes it); an odd one is only counted."""
        if skipped is None:
            return
        if skipped > self._nonfinite_seen and self.learner.version == version_before:
            self._nonfinite_streak += int(skipped - self._nonfinite_seen)
        elif self.learner.version != version_before:
            self._nonfinite_streak = 0
        self._nonfinite_seen = skipped
        if self._nonfinite_streak >= NONFINITE_LIMIT:
            last = latest_checkpoint(self.run_dir / "checkpoints")
            raise RunStopped(f"the learner's loss or gradient was not finite in {self._nonfinite_streak} updates in a "
                             f"row (NaN or inf in the data, or diverging); the last checkpoint with finite weights "
                             f"is {last if last else 'none yet'}")

    def _account(self, info: dict, version: int) -> None:
        skipped = info.get("nonfinite_skipped", 0)  # workers that learn count their own skipped gradients
        if skipped >= NONFINITE_LIMIT:
            last = latest_checkpoint(self.run_dir / "checkpoints")
            raise RunStopped(f"a worker's gradients were not finite {skipped} times (NaN or inf in its data, or "
                             f"diverging); the last checkpoint with finite weights is {last if last else 'none yet'}")
        self.env_steps += info.get("env_steps", 0)
        self.interval.add_info(info, version)
        self.totals.env_s += info.get("env_s", 0.0)
        self.totals.infer_s += info.get("infer_s", 0.0)
        self.totals.worker_learn_s += info.get("learn_s", 0.0)
        self.totals.transport_bytes += info.get("transport_bytes", 0)
        if "episode_returns" in info:
            self.episodes.add(info["episode_returns"], info["episode_lengths"])
        if "policy" in info:  # an evaluation's weights, sent with a score at least the evaluator's best
            self._offer_best(info)

    def _offer_best(self, info: dict) -> None:
        if self._best is None:
            self._best = BestPolicy(self.run_dir)  # on resume: the score to beat is the kept one's
        offered, scores = info["policy"], info["metrics"]
        # env steps when the report arrived (the weights were pulled a little earlier; their version names them)
        meta = {"eval_return_std": scores["eval_return_std"], "eval_episodes": offered["eval_episodes"],
                "version": offered["version"], "env_steps": self.env_steps}
        self._best.offer(offered["weights"], scores["eval_return_mean"], meta)

    def _emit_row(self, now: float) -> None:
        r = row(self.env_steps, self.wall_s, now - self._last_row, self.interval, self.episodes, self.updates,
                self.restarts)
        for adapter in self.backend.services().values():
            r.update(adapter.stats())
        self.lags.extend(self.interval.lag)
        self.interval = Interval()
        self._last_row = now
        for o in self.observers:
            o.on_row(self, r)

    # --- numbers ---------------------------------------------------------------------------------
    @property
    def updates(self) -> int:
        """Learner updates; where the workers learn (A3C, GORILA), the updates the parameter server applied (each
        shard's counted: S per gradient for GORILA's S shards; A3C has one)."""
        if self.learner is not None:
            return self.learner.version
        return sum(a.applied_updates() for a in self.backend.services().values()) if self.backend else 0

    @property
    def wall_s(self) -> float:
        return self._wall_offset + time.perf_counter() - self._t_start

    def stats(self) -> dict[str, Any]:
        session = max(time.perf_counter() - self._t_start, 1e-9)
        return {"env_steps": self.env_steps, "updates": self.updates, "episode_return_mean": self.episodes.mean_return,
                "episodes": self.episodes.count, "sps": (self.env_steps - self._steps_at_start) / session,
                "wall_s": self.wall_s, "actor_restarts": self.restarts, "hyperparameters": dict(self._applied)}

    def _summary(self, actor: dict, services: dict) -> dict[str, Any]:
        lags = self.lags + self.interval.lag
        dropped = services.pop("unrolls_dropped", None)
        actor_stats = dict(actor)
        if "actor_wait_s" in services:  # an inference server: actors blocked waiting for actions
            actor_stats["block_s"] = services.pop("actor_wait_s")
        nodes = actor_stats.pop("nodes", None)
        roles = actor_stats.pop("roles", {})
        served = any(isinstance(s, Inference) for s in self.program.services.values())
        name, numbers, wait_frac = verdict(self.totals, actor_stats, services, self.learner is None, served,
                                           feeders(self.program, roles))
        stats = self.stats()
        tot = self.totals
        split = {
            "startup_s": tot.startup_s,
            "wait_s": tot.wait_s,
            "learn_s": tot.learn_s,
            "publish_s": tot.publish_s,
            "env_s": tot.env_s,
            "infer_s": tot.infer_s,
            "worker_learn_s": tot.worker_learn_s,
        }
        summary = {
            "system": self.system,
            "env": self.cfg.env,
            "runtime": self.cfg.runtime,
            "env_steps": self.env_steps,
            "wall_s": round(self.wall_s, 3),
            "sps": round(stats["sps"], 1),
            "episode_return_mean": num(self.episodes.mean_return),
            "episodes": self.episodes.count,
            "learner_updates": self.updates,
            "learner_wait_frac": num(wait_frac),
            "policy_lag_mean": num(float(np.mean(lags)) if lags else float("nan")),
            # the same lag as env steps of data (updates times env steps per update): PPO's passes make a version of
            # every minibatch, so a lag of many versions can be one batch
            "policy_lag_env_steps": num(
                float(np.mean(lags)) * self.env_steps / self.updates if lags and self.updates else float("nan")
            ),
            "actor_restarts": self.restarts,
            "bottleneck": name,
            "bottleneck_detail": numbers,
            "time_split_s": {
                k: round(v, 3) for k, v in {**split, **{f"actor_{k}": v for k, v in actor_stats.items()}}.items()
            },
            # per role, summed over its components (local runtime): seconds in step, seconds waiting for a grant
            "role_time_s": {r: {k: round(v, 3) for k, v in t.items()} for r, t in roles.items()},
            "interrupted": self.interrupted,
            "run_dir": str(self.run_dir),
            "clock_started_at": round(self._started_at, 3),
            # between processes, this session: outputs and weights pulled (not parameter-server or SEED stream traffic)
            "bytes_per_env_step": num(tot.transport_bytes / max(self.env_steps - self._steps_at_start, 1)),
        }
        if self.stopped:
            summary["stopped"] = self.stopped
        summary.update({k: num(v) for k, v in services.items()})
        for key, (total, count) in self._summary_sums.items():
            summary[f"{key}_mean"] = num(total / count) if count else None
        if dropped is not None:
            summary["unrolls_dropped"] = dropped
        if nodes is not None:
            summary["actor_nodes"] = nodes
        kept = read_best(self.run_dir)
        if kept is not None:  # what distrl eval plays: the best periodic evaluation's weights
            summary["best_policy"] = headline(kept)
        return summary

    # --- state in memory (what PBT's exploit copies) ----------------------------------------------
    def state(self) -> dict[str, Any]:
        """Copies of what a checkpoint holds of the models and optimizers (the learner's and the services'),
        with the base hyperparameters: another trainer of the same system and env can ``load_state`` it."""
        for adapter in self.backend.services().values():
            adapter.sync()
        modules, optimizers = self._parts()
        return {"modules": {k: {n: t.detach().clone() for n, t in m.state_dict().items()} for k, m in modules.items()},
                "optimizers": {k: copy.deepcopy(o.state_dict()) for k, o in optimizers.items()},
                "hyperparameters": dict(self.base)}

    def load_state(self, state: dict[str, Any]) -> None:
        """Take another trainer's :meth:`state`: weights, optimizer statistics and hyperparameters. The
        components act with the new weights from the learner's next update on (its next version)."""
        if self.learner is None:
            raise ConfigError(f"{self.system} learns in its workers (a parameter server): its state cannot be loaded "
                              "in memory")
        modules, optimizers = self._parts()
        if set(modules) != set(state["modules"]) or set(optimizers) != set(state["optimizers"]):
            raise ValueError(f"state of {sorted(state['modules'])} / {sorted(state['optimizers'])} does not fit "
                             f"{sorted(modules)} / {sorted(optimizers)}")
        for name, module in modules.items():
            module.load_state_dict(state["modules"][name])
        for name, optimizer in optimizers.items():  # load_state_dict keeps the given tensors: copy them first
            optimizer.load_state_dict(copy.deepcopy(state["optimizers"][name]))
        self.base.update({k: float(v) for k, v in state["hyperparameters"].items() if k in self.base})
        self._push_hyperparameters(force=True)  # the loaded optimizers carry the other run's rates

    # --- checkpoints -----------------------------------------------------------------------------
    def _parts(self) -> tuple[dict, dict]:
        modules, optimizers = self.learner.checkpoint_parts() if self.learner else ({}, {})
        for adapter in self.backend.services().values():
            m, o = adapter.checkpoint_parts()
            modules, optimizers = {**modules, **m}, {**optimizers, **o}
        return modules, optimizers

    def checkpoint(self) -> Path:
        adapters = self.backend.services()
        for adapter in adapters.values():
            adapter.sync()
        modules, optimizers = self._parts()
        counters = {**self.identity, "env_steps": self.env_steps, "wall_s": self.wall_s, "updates": self.updates,
                    "actor_restarts": self.restarts, "episodes": self.episodes.state(),
                    "learner": self.learner.counters() if self.learner else {},
                    "services": {name: a.counters() for name, a in adapters.items()},
                    "hyperparameters": dict(self.base)}

        def save_services(folder: Path) -> None:
            for adapter in adapters.values():
                adapter.save(folder)

        # named by env steps; by learner updates where the run steps no env (offline), so that names still advance
        position = self.updates if self.program.max_updates is not None else self.env_steps
        return save_checkpoint(self.run_dir / "checkpoints", position, modules, optimizers, counters,
                               keep=self.cfg.keep_checkpoints, extra=save_services)

    def _restore(self, folder: Path) -> None:
        newest = list_checkpoints(self.run_dir / "checkpoints")[-1]
        if newest != folder:  # a newer one is incomplete (a crash while writing) or holds non-finite weights
            print(f"distrl: {newest.name} cannot be used; resuming from {folder.name}", file=sys.stderr, flush=True)
        modules, optimizers = self._parts()
        try:
            saved = load_checkpoint(folder, modules, optimizers)
        except Exception as e:  # a foreign or damaged checkpoint: shapes or files that do not fit this run
            first = str(e).strip().splitlines()[0][:200] if str(e).strip() else type(e).__name__
            raise ConfigError(f"checkpoint {folder} does not fit this run ({first})") from None
        check_counters(saved, self.identity, folder, self.former_identity)
        self.env_steps, self.restarts = saved["env_steps"], saved["actor_restarts"]
        self._wall_offset = saved["wall_s"]
        self.episodes.load(saved.get("episodes", {}))
        if self.learner is not None:
            self.learner.load_counters(saved.get("learner", {}))
        services = saved.get("services")
        for name, adapter in self.backend.services().items():
            # checkpoints from before services kept their counters with the learner's
            adapter.load_counters(services.get(name, {}) if services is not None else saved.get("learner", {}))
            try:
                adapter.load(folder)
            except Exception as e:  # saved by an older layout, or by a run with other settings (another dataset)
                raise ConfigError(f"checkpoint {folder}: the saved '{name}' does not fit this run's "
                                  f"({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''})") from None
        self.base.update({k: v for k, v in saved.get("hyperparameters", {}).items() if k in self.base})


_STOP_SIGNALS = tuple(s for s in (signal.SIGTERM, getattr(signal, "SIGHUP", None)) if s is not None)


def overlaps(setting: str, device, runtime: str) -> bool:
    """``overlap_transfers``: ``auto`` is on where the learner computes on a GPU and its components run beside it
    (local, ray). On ``inline`` they step in the learner's thread, between its iterations: nothing runs meanwhile that
    the transfers could overlap, and a program that is on-policy there (A2C: policy lag 0) must find each
    update's weights published before its actors step again, which the delayed publish would not guarantee."""
    return setting == "on" or (setting == "auto" and device.type == "cuda" and runtime != "inline")


def _raise_stop(signum, frame):
    raise _StopRequested()
