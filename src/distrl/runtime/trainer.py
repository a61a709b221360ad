"""The trainer: runs a program on a backend, one iteration at a time, and owns the run directory.

    trainer = Trainer(program, run_cfg, run_dir, system="impala", observers=[...])
    trainer.start()                      # services, learner (restored on resume), components
    trainer.step(updates=100)            # or env_steps=..., or run() to the end of the budget
    trainer.set_hyperparameters(lr=1e-3) # the one mutation point; then stats(), pause(), close() -> summary

An iteration is the same on every backend: collect what components reported (timing the wait), take a batch
from the consumed channel (or let the learner sample its replays), update, publish weights, account env steps,
episodes and policy lag, request periodic roles (an evaluation) when due. The trainer keeps the life cycle, the
iteration, the mutation point and checkpoints; the rest are parts under ``run/``: observers (metrics rows,
checkpoints, progress, the best evaluated policy), the release and pace rules, the non-finite watch, overlapped
transfers and the summary.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from distrl.core.program import Program
from distrl.errors import ConfigError, RunStopped
from distrl.models.device import resolve_device, resolve_precision
from distrl.runtime.backends import make_backend
from distrl.runtime.learners import LearnerGroup, for_learners, make_learner
from distrl.runtime.run import state as run_state
from distrl.runtime.run.accounting import Ledger, row
from distrl.runtime.run.best_policy import BestPolicyKeeper
from distrl.runtime.run.checkpoint import latest_checkpoint
from distrl.runtime.run.hyperparameters import Hyperparameters
from distrl.runtime.run.nonfinite import NonfiniteWatch
from distrl.runtime.run.overlap import Transfers
from distrl.runtime.run.release import Pacer, Periodic, ReleaseRule
from distrl.runtime.run.stop_signals import RunSignals, StopRequested
from distrl.runtime.run.summary import summarise
from distrl.runtime.services.base import applied_updates, stateful


class Trainer:
    def __init__(self, program: Program, run_cfg, run_dir: str | Path, *, system: str, resume: bool = False,
                 observers: tuple = (), identity: dict | None = None, former_identity: dict | None = None,
                 on_ready=None, token: str = "", shared=None):
        """``identity`` (system, env, spaces) is written into every checkpoint and checked on resume (where a
        checkpoint may also say ``former_identity``'s values: a run saved under a system's former name); ``on_ready()``
        runs once the services, learner and checkpoint have loaded; ``shared``: other programs' services, by name."""
        self.identity = identity or {"system": system, "env": run_cfg.env}
        self.former_identity = former_identity or {}
        self.on_ready, self.token, self.shared = on_ready, token, shared  # token: network peers' secret (not saved)
        self.program, self.cfg, self.system = program, run_cfg, system
        self.run_dir, self.resume = Path(run_dir), resume
        self.observers = [BestPolicyKeeper(self.run_dir), *observers]
        self.backend = self.learner = self.transfers = self.group = None  # group: several learners' replicas
        self.env_steps = self.restarts = self.steps_at_start = 0
        self.ledger, self.settings = Ledger(program.summary_metrics), Hyperparameters(program)
        self.release, self.pacer, self.periodic = ReleaseRule(program), Pacer(program), Periodic(program)
        self.nonfinite = NonfiniteWatch(self.run_dir)
        self.wall_offset = self.started_at = 0.0
        self._idle = False
        self._evaluated = None  # the weights the last periodic evaluation played (_current_weights' measure)
        self._evaluation_in = False  # an evaluation reported since the last row
        self._published = self._first_version = -1
        self._t_start = self._last_row = None
        self.interrupted, self.stopped = False, None  # stopped: why a run ended early (a crash loop, NaN data)

    # --- life cycle ------------------------------------------------------------------------------
    def start(self) -> None:
        cfg = self.cfg
        self.backend = make_backend(cfg.runtime, cfg.seed, cfg.torch_threads, cfg.ray_address, cfg.step_timeout_s,
                                    cfg.max_restarts, self.token, self.shared)
        if cfg.num_learners > 1:  # each learner takes a batch of the program's size
            self.program = for_learners(self.program, cfg.num_learners)
        device = resolve_device(cfg.device)
        precision = resolve_precision(cfg.precision, device, self.program.placeable_learner)  # plan_run's: resolved
        self.learner, shared = make_learner(self.program, self.backend.open(self.program), cfg.num_learners, device,
                                            precision)
        if self.resume:
            last = latest_checkpoint(self.run_dir / "checkpoints")
            if last is None:
                raise ConfigError(f"cannot resume '{self.run_dir}': it holds no loadable checkpoint")
            run_state.restore(self, last)
        if cfg.num_learners > 1:  # the replicas start from the restored state
            self.learner = self.group = LearnerGroup.start(self.learner, self.program, shared, cfg.num_learners,
                                                           device, precision, cfg.torch_threads,
                                                           cfg.step_timeout_s, cfg.runtime)
        self.transfers = Transfers(self.learner, self.program, cfg, device)
        if self.on_ready is not None:  # everything loaded: now the run dir may change (config.yaml)
            self.on_ready()
        self._push_hyperparameters(force=True)
        self.nonfinite.seen = self.learner.counters().get("nonfinite_skipped", 0) if self.learner else 0
        weights = (self.learner.get_weights(), self.learner.version) if self.learner else None
        self._published = self._first_version = self.learner.version if self.learner else -1
        for o in self.observers:  # writers and displays open before any worker runs
            o.on_start(self)
        self.backend.start(weights)
        self.periodic.start(self.env_steps)  # the first evaluation after one interval of this session
        self._t_start = self._last_row = time.perf_counter()  # process start-up is not training time
        self.started_at = time.time()  # the same instant on the wall clock: a benchmark's time from its command
        self.steps_at_start = self.env_steps

    def run(self) -> dict[str, Any]:
        """Start, train to the budget (or ``max_wall_s``), close. Ctrl-C, SIGTERM and SIGHUP end it the same way: a
        final checkpoint, ``summary.json``, no process left behind."""
        stopped = None
        with RunSignals() as signals:
            try:
                self.start()
                self.step()
                self._evaluate_final()
            except (KeyboardInterrupt, StopRequested):
                self.interrupted = True
            except RunStopped as e:  # a crash loop, non-finite data: ended like an interrupt, then reported
                self.stopped, stopped = str(e), e
            except BaseException:  # a learner error ends the run; the last checkpoint stays
                signals.restore()
                self.close(failed=True)
                raise
            signals.ignore()  # one stop is enough: the close below must not be cut short
            summary = self.close(failed=not self.started)
        if stopped is not None:
            raise stopped
        if summary is None:  # interrupted before training began: nothing to sum up
            raise KeyboardInterrupt
        return summary

    def step(self, updates: int | None = None, env_steps: int | None = None) -> dict[str, Any]:
        """Run iterations until ``updates`` more learner updates or ``env_steps`` more env steps (or, with
        neither, the run's budget) are done; stop early at the budget or ``max_wall_s``. An iteration is whole: it
        takes a batch of the actors' output, so ``env_steps`` is passed by up to a batch (PPO's CartPole: 16,384)."""
        u0, s0 = self.updates, self.env_steps
        while not self.done:
            if (updates is not None and self.updates - u0 >= updates) or \
                    (env_steps is not None and self.env_steps - s0 >= env_steps):
                break
            self._iterate()
        return self.stats()

    def _evaluate_final(self) -> None:
        """At the end of the budget (not at ``max_wall_s``), one more periodic evaluation where the last one played
        older weights than the final ones, or where the one due at the last batch never ran: the curve ends with the
        final policy's score, and the best policy kept is chosen among every evaluated set of weights, the final one
        included. The actors get no new steps meanwhile; at most ``step_timeout_s`` is waited."""
        if not self.periodic.due or self.progress < 1.0 or self._evaluated == self._current_weights():
            return
        self.backend.pause(True)
        if self.ledger.interval.steps or self.ledger.interval.metrics:  # what came before keeps a row of its own
            self._emit_row(time.perf_counter())
        version, deadline = self.learner.version if self.learner else 0, time.perf_counter() + self.cfg.step_timeout_s
        while self._evaluated != self._current_weights() and time.perf_counter() < deadline:
            for name in self.periodic.due:  # (none while one is in flight: that one may have played older weights)
                self.backend.request(name)
            reports, restarts = self.backend.poll(0.05)
            self.restarts += restarts
            for info in reports:
                self._account(info, version)
            if self._evaluation_in:
                self._emit_row(time.perf_counter())

    def _current_weights(self) -> int:
        """What an evaluation of the newest weights reports as ``eval_version``: the learner's version, or where the
        workers learn, the updates applied (read when its report arrives)."""
        return self.learner.version if self.learner is not None else self.updates

    @property
    def started(self) -> bool:
        """Did :meth:`start` finish (components running, training under way)?"""
        return self._t_start is not None

    @property
    def done(self) -> bool:
        if self.progress >= 1.0:  # of env steps, or of learner updates where the run steps no env (offline)
            return True
        return self.cfg.max_wall_s is not None and time.perf_counter() - self._t_start >= self.cfg.max_wall_s

    def pause(self, paused: bool = True) -> None:
        """Stop (or resume) granting components new steps; what is in flight still arrives."""
        self.backend.pause(paused)

    def close(self, failed: bool = False) -> dict[str, Any] | None:
        """Stop every component; write the last row, checkpoint and ``summary.json``; return the summary."""
        backend, summary = self.backend, None
        try:
            if backend is not None and self.started:
                actor, services = {}, {}
                try:
                    actor = backend.stats()
                    for adapter in backend.services().values():
                        services.update(adapter.stats(whole_run=True))
                    for adapter in stateful(backend.services().values()) if not failed else ():
                        adapter.sync()
                finally:
                    summary = None if failed else summarise(self, actor, services)
                    if not failed and self.ledger.interval.steps:
                        self._emit_row(time.perf_counter())
        finally:
            try:
                for o in self.observers:
                    o.on_close(self, summary)
            finally:
                if self.transfers is not None:  # a batch being staged finishes first (its arrays are slot views)
                    self.transfers.close()
                if self.group is not None:  # the replicas end with the run, before the backend (on ray, its actors)
                    self.group.close()
                if backend is not None:
                    backend.close()
        if summary is not None:
            (self.run_dir / "summary.json").write_text(json.dumps(summary, indent=1))
        return summary

    # --- the one mutation point ------------------------------------------------------------------
    def set_hyperparameters(self, **values: float) -> None:
        """Change base values of the program's hyperparameters (schedules scale them); they reach the
        learner, the services and the components on every backend."""
        self.settings.set(values)
        self._push_hyperparameters(force=True)

    @property
    def hyperparameters(self) -> dict[str, float]:
        return dict(self.settings.base)

    def _push_hyperparameters(self, force: bool = False) -> None:
        changed, to_components = self.settings.changes(self.progress, force)
        if changed and self.learner is not None:
            self.learner.set_hyperparameters(changed)
        if changed and self.backend is not None:
            self.backend.set_hyperparameters(changed, to_components)

    @property
    def progress(self) -> float:
        """How far through its budget the run is (what schedules scale with)."""
        if self.program.max_updates is not None:
            return self.updates / max(self.program.max_updates, 1)
        return self.env_steps / max(self.cfg.total_steps, 1)

    # --- one iteration ---------------------------------------------------------------------------
    def _iterate(self) -> None:
        t0 = time.perf_counter()
        self.transfers.publish_copied(self.backend)  # the last update's weights, if they reached the host meanwhile
        reports, restarts = self.backend.poll(0.05 if self._idle else 0.0)
        self.restarts += restarts
        version = self.learner.version if self.learner else 0
        for info in reports:
            self._account(info, version)
        if self.learner is not None:
            self.pacer.pace(self.backend, self.env_steps, self.learner.version)
        metrics, t1, release = None, time.perf_counter(), None
        item = self.transfers.next_batch(self.backend, 0.0 if reports else 0.05) \
            if self.program.consumes is not None else None
        if item is not None:
            batch, infos, release = item
            for info in infos:
                self._account(info, version)
            self.release.consumed(infos, version)
        if item is not None or self.program.consumes is None:
            self._push_hyperparameters()
        if item is not None or (self.program.consumes is None and self.learner is not None):
            t1 = time.perf_counter()
            metrics = self.learner.step(batch if item is not None else None)
        t2 = time.perf_counter()
        if metrics is not None:
            self.nonfinite.update(metrics.get("nonfinite_skipped"), version, self.learner.version)
            self.ledger.learned(metrics, t1 - t0, t2 - t1)
            if self.learner.version != self._published:
                self.transfers.publish(self.backend)
                self._published = self.learner.version
                self.ledger.published(time.perf_counter() - t2)
        else:  # before the first update: processes starting up, not counted as the learner's wait
            self.ledger.waited(t2 - t0, self.learner is not None and self.learner.version == self._first_version)
        if release is not None:  # after the publish: the slots' producers start on the newest weights
            self.release.release(self.backend, release, version, self.learner.version)
        self._idle = metrics is None and not reports
        self.periodic.request(self.backend, self.env_steps)
        now = time.perf_counter()
        due = now - self._last_row >= self.cfg.log_interval_s or self._evaluation_in
        if due and (self.ledger.interval.steps or self.ledger.interval.metrics):
            self._emit_row(now)  # (a row with nothing in it would fix the CSV's columns too early)
        for o in self.observers:
            o.on_step(self)

    def _account(self, info: dict, version: int) -> None:
        if "eval_version" in info.get("metrics", {}):  # a periodic evaluation: which weights it played; its row is its
            # own (a row's metrics are the mean of its interval's reports: two evaluations would share one figure)
            self._evaluated = int(info["metrics"]["eval_version"]) if self.learner is not None else self.updates
            self._evaluation_in = True
        self.nonfinite.worker(info)
        self.env_steps += info.get("env_steps", 0)
        self.ledger.report(info, version)
        for o in self.observers:
            o.on_report(self, info)

    def _emit_row(self, now: float) -> None:
        self._evaluation_in = False
        r = row(self.env_steps, self.wall_s, now - self._last_row, self.ledger.take_interval(), self.ledger.episodes,
                self.updates, self.restarts)
        for adapter in self.backend.services().values():
            r.update(adapter.stats())
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
        return applied_updates(self.backend.services().values()) if self.backend else 0

    @property
    def wall_s(self) -> float:
        return self.wall_offset + time.perf_counter() - self._t_start

    def stats(self) -> dict[str, Any]:
        session = max(time.perf_counter() - self._t_start, 1e-9)
        episodes = self.ledger.episodes
        return {"env_steps": self.env_steps, "updates": self.updates, "episode_return_mean": episodes.mean_return,
                "episodes": episodes.count, "sps": (self.env_steps - self.steps_at_start) / session,
                "wall_s": self.wall_s, "actor_restarts": self.restarts, "hyperparameters": dict(self.settings.applied)}

    # --- state: in memory (what PBT's exploit copies) and checkpoints ----------------------------
    def state(self) -> dict[str, Any]:
        """Copies of what a checkpoint holds of the models and optimizers (the learner's and the services'),
        with the base hyperparameters: another trainer of the same system and env can ``load_state`` it."""
        return run_state.copy_state(self)

    def load_state(self, state: dict[str, Any]) -> None:
        """Take another trainer's :meth:`state`: weights, optimizer statistics and hyperparameters. The
        components act with the new weights from the learner's next update on (its next version)."""
        run_state.load_state(self, state)
        self._push_hyperparameters(force=True)  # the loaded optimizers carry the other run's rates

    def checkpoint(self) -> Path:
        """Write a checkpoint of the learner, the services and the counters; prune the oldest."""
        return run_state.checkpoint(self)
