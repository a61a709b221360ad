"""``distrl pbt``: a population of runs of any system, its directory, logs, summary and resume.

    POP/pbt.json          the population's settings (what --resume reads back)
    POP/members/mI/       each member's own run dir: config.yaml, metrics.csv, TensorBoard, checkpoints
    POP/population.csv    one row per ready member: wall_s, member, env_steps, score, its hyperparameters
    POP/lineage.csv       one row per exploit: who copied whom, when, scores, hyperparameters before and
                          after, the checksum both ends agreed on
    POP/state.json        the controller's record of every member (rewritten after each ready member)
    POP/games.csv         a population that plays itself (``self_play``): one row per ready member, its wins,
                          draws and losses in that slice (against each other seat of its games) and its Elo rating
                          (``pbt/self_play.py``)
    POP/summary.json      the best member, its score and its hyperparameter schedule

Ray Tune has a PBT scheduler, and we do not use it: its exploit saves the source trial's checkpoint to
storage and restores it into the target (the copy goes through files, which this design rules out), and
Tune would own the training loop (members as Tune trainables). Our trainers are already steppable and
hold their state in memory, so the controller (``controller.py``, ~100 lines) drives them directly,
in this process on ``local`` or as Ray actors on ``ray`` (``members.py``).
"""

from __future__ import annotations

import csv
import dataclasses
import json
import math
import os
import time
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from distrl.errors import ConfigError
from distrl.pbt.controller import Controller, MemberRecord
from distrl.pbt.search import Explore
from distrl.runtime.run.checkpoint import latest_checkpoint
from distrl.runtime.run.run_dir import append_row as _append
from distrl.runtime.run.run_dir import last_wall, prepare_run_dir
from distrl.runtime.run.run_dir import read_json_object as _read_json
from distrl.runtime.run.run_dir import read_rows as _rows
from distrl.runtime.run.run_dir import write_json as _write_json

PLACEMENTS = ("local", "ray")


def make_member_trainer(system: str, settings: dict[str, Any], resume: bool | None):
    """A member's trainer (module-level so that Ray can send it to the member's actor)."""
    from distrl.api import make_trainer

    if resume is None:  # a member made again after its Ray actor died: from its last checkpoint, if it wrote one
        resume = latest_checkpoint(Path(settings["run_dir"]) / "checkpoints") is not None
    if resume:  # a member of a population that plays itself gets its games' env (the folder now) and handle again
        playing = {k: settings[k] for k in ("env", "shared")} if "shared" in settings else {}
        return make_trainer(system, resume=True, run_dir=settings["run_dir"], total_steps=settings["total_steps"],
                            **playing)
    return make_trainer(system, force=True, **settings)


def perturber(specs: list[Explore], resample_prob: float):
    """The explore step: each explored value is redrawn from its distribution with ``resample_prob``,
    otherwise perturbed (x0.8 / x1.2, or a neighbouring choice)."""
    by_name = {s.name: s for s in specs}

    def perturb(values, rng: np.random.Generator) -> dict[str, float]:
        out = dict(values)
        for name, spec in by_name.items():
            out[name] = spec.sample(rng) if rng.random() < resample_prob else spec.perturb(float(values[name]), rng)
        return out

    return perturb


def _refuse_other_settings(pop_dir: Path, saved: dict, given: dict, settings: dict) -> None:
    """A resumed population keeps the settings it was started with: one given again with another value is one line,
    not silently ignored (the system as saved, before ``_migrated`` renames it, or as it is now)."""
    from distrl.config import resume_conflicts

    if given.get("system") is not None and given["system"] == _migrated(pop_dir, saved).get("system"):
        given = {**given, "system": None}  # the system as it is named now
    own = saved.get("settings") if isinstance(saved.get("settings"), dict) else {}
    differs = resume_conflicts(given, {k: saved.get(k, DEFAULTS.get(k)) for k in given}, own, settings,
                               switches={"exploit": (None, "--no-exploit"),
                                         "explore_hyperparameters": (None, "--no-explore"),
                                         "self_play": ("--self-play", None)})
    if differs:
        raise ConfigError(f"cannot resume: the population in {pop_dir} keeps the settings it was started with; this "
                          f"command gives {', '.join(differs)}")


def _migrated(pop_dir: Path, saved: dict) -> dict:
    """A population saved by distrl 0.2 under ``a2c`` or ``impala`` with PPO's passes is one of ``ppo`` or ``appo``
    (``agents/registry.saved_run``, read off its first member's config); one that stays keeps its settings without
    PPO's, which changed nothing there."""
    from distrl.agents.registry import get_system, saved_run
    from distrl.runtime.run.run_dir import read_config

    member = pop_dir / "members" / "m0"
    if not (member / "config.yaml").is_file() or not isinstance(saved.get("system"), str):
        return saved
    now = saved_run(read_config(member))["system"]
    settings = saved.get("settings") if isinstance(saved.get("settings"), dict) else {}
    if now == saved["system"]:
        passes = getattr(get_system(now), "PASSES", ())
        return {**saved, "settings": {k: v for k, v in settings.items() if k not in passes}}
    return {**saved, "system": now}


def _check_numbers(population, ready_steps, fraction, resample_prob) -> None:
    """The population's own numbers (command-line arguments, or a resumed pbt.json's), each in its range."""
    def number(x, kind=(int, float)):
        return isinstance(x, kind) and not isinstance(x, bool) and x == x

    if not number(population, int) or population < 2:
        raise ConfigError(f"--population must be at least 2, got {population!r}")
    if not number(ready_steps, int) or ready_steps < 1:
        raise ConfigError(f"--ready-steps must be at least 1, got {ready_steps!r}")
    if not number(fraction) or not 0.0 < fraction <= 0.5:
        raise ConfigError(f"--fraction must be in (0, 0.5], got {fraction!r}")
    if not number(resample_prob) or not 0.0 <= resample_prob <= 1.0:
        raise ConfigError(f"--resample-prob must be in [0, 1], got {resample_prob!r}")


def _check_ranges(config_cls, specs) -> None:
    """Every value an ``--explore`` spec can draw (both ends of a range, each option of a choice) is one the
    setting takes (``lr`` > 0, ``entropy_coef`` >= 0, ...): the explore step never makes a config that a
    ``--set`` of the same value would refuse."""
    from distrl import config as config_mod

    for spec in specs:
        for value in spec.values:
            try:
                config_mod.build(config_cls, {spec.name: value})
            except ConfigError as e:
                raise ConfigError(f"--explore {spec.name}={spec.kind}{spec.values}: {e}") from None


# a member trains in slices, in turn with the others: autoscale's default (auto) is off for it
SLICED = {"autoscale": "off"}
# a new population's settings where the command gives none; a resumed one keeps its own (pbt.json)
DEFAULTS = {"population": 4, "explore": [], "ready_steps": 20_000, "runtime": "local", "fraction": 0.2,
            "resample_prob": 0.25, "exploit": True, "explore_hyperparameters": True, "seed": 0, "self_play": False}


def run_pbt(system: str, env: str | None = None, *, population: int | None = None, explore: list[str] | None = None,
            ready_steps: int | None = None, total_steps: int | None = None, runtime: str | None = None,
            member_runtime: str | None = None, fraction: float | None = None, resample_prob: float | None = None,
            exploit: bool | None = None, explore_hyperparameters: bool | None = None, seed: int | None = None,
            run_dir: str | None = None, resume: bool = False, force: bool = False,
            settings: dict[str, Any] | None = None, self_play: bool | None = None, log=None) -> dict[str, Any]:
    """Train a population; return (and write) its summary. Every input is checked before anything is
    written; ``resume`` continues the population in ``run_dir`` with the settings it was started with (one given
    that differs from them is refused in one line). A setting left None takes ``DEFAULTS``.
    ``self_play``: the members play each other in a game of two or more players (``pbt/self_play.py``)."""
    from distrl.api import plan_run

    given = {"population": population, "explore": explore, "ready_steps": ready_steps, "runtime": runtime,
             "fraction": fraction, "resample_prob": resample_prob, "exploit": exploit,
             "explore_hyperparameters": explore_hyperparameters, "seed": seed, "self_play": self_play}

    if resume:
        if not run_dir:
            raise ConfigError("--resume needs --run-dir naming the population to continue")
        if force:
            raise ConfigError("--resume and --force exclude each other: resume continues a population, force starts it "
                              "anew")
        saved = _read_json(Path(run_dir) / "pbt.json", "a population (no pbt.json)")
        missing = {"system", "env", "population", "explore", "ready_steps", "total_steps", "runtime", "member_runtime",
                   "fraction", "resample_prob", "exploit", "explore_hyperparameters", "seed", "settings"} - set(saved)
        if missing:
            raise ConfigError(f"cannot resume: {Path(run_dir) / 'pbt.json'} lacks {', '.join(sorted(missing))}")
        _refuse_other_settings(Path(run_dir), saved, {**given, "system": system, "env": env,
                                                      "member_runtime": member_runtime}, settings or {})
        budget = saved["total_steps"]
        if not _whole(budget):
            raise ConfigError(f"cannot resume: {Path(run_dir) / 'pbt.json'}: total_steps is {budget!r}, not a whole "
                              "number of env steps >= 1")
        if total_steps is not None and not _whole(total_steps):
            raise ConfigError(f"--total-steps must be a whole number of env steps >= 1; got {total_steps!r}")
        if total_steps is not None and total_steps != budget:  # a larger budget: the members resume with it
            if total_steps < budget:
                raise ConfigError(f"cannot resume: --total-steps {total_steps:,} is below the population's "
                                  f"{budget:,}; a resumed population's budget may grow, not shrink")
            saved = {**saved, "total_steps": total_steps}
        saved = _migrated(Path(run_dir), saved)
        try:  # a hand-edited or damaged pbt.json gets the checks a new population's arguments get
            _check_numbers(saved["population"], saved["ready_steps"], saved["fraction"], saved["resample_prob"])
            from distrl.agents.registry import get_system

            _check_ranges(get_system(saved["system"]).Config, [Explore.parse(t) for t in saved["explore"]])
        except (ConfigError, TypeError) as e:
            raise ConfigError(f"cannot resume: {Path(run_dir) / 'pbt.json'}: {e}") from None
        return _run(Path(run_dir), saved, resume=True, log=log)
    population, explore, ready_steps, runtime, fraction, resample_prob, exploit, explore_hyperparameters, seed, \
        self_play = (DEFAULTS[k] if v is None else v for k, v in given.items())
    settings = dict(settings or {})
    if runtime not in PLACEMENTS:
        raise ConfigError(f"--runtime '{runtime}' is not a PBT placement (valid: {', '.join(PLACEMENTS)})")
    for key in ("runtime", "run_dir", "seed", "total_steps"):
        if key in settings:
            raise ConfigError(f"--set {key}=... is set by pbt itself (use --member-runtime, --run-dir, --seed, "
                              "--total-steps)")
    _check_numbers(population, ready_steps, fraction, resample_prob)
    specs = [Explore.parse(text) for text in explore]
    if not specs:
        raise ConfigError("pbt needs at least one --explore NAME=loguniform(LOW,HIGH) (or uniform, choice)")
    if len({s.name for s in specs}) != len(specs):
        raise ConfigError("--explore names a hyperparameter twice")
    if self_play:
        from distrl.league.run import check_game

        check_game(env, "a population that plays itself")
    from distrl.core.program import RUNTIMES

    if member_runtime is not None and member_runtime not in RUNTIMES:
        raise ConfigError(f"--member-runtime must be one of {', '.join(RUNTIMES)}; got {member_runtime!r}")
    module, run_cfg, sys_cfg, spec, program = plan_run(system, env, total_steps=total_steps, runtime=member_runtime,
                                                       **{**SLICED, **settings})
    if run_cfg.autoscale == "on":  # members train in slices, in turn: an idle member's windows would mislead it
        raise ConfigError("autoscale=on sizes one run; PBT's members train in slices and cannot autoscale yet")
    if program.make_learner is None:
        raise ConfigError(f"pbt copies a learner's state in memory, and {system} learns in its workers "
                          "(a parameter server); systems with a learner: every one but a3c and gorila")
    if run_cfg.num_learners > 1:  # an exploit copies one learner's state in memory; replicas would keep theirs
        raise ConfigError(f"pbt runs one learner per member; num_learners={run_cfg.num_learners} is not supported "
                          "(valid: 1)")
    unknown = [s.name for s in specs if s.name not in program.hyperparameters]
    if unknown:
        raise ConfigError(f"--explore {', '.join(unknown)}: not a hyperparameter of {system} "
                          f"(valid: {', '.join(sorted(program.hyperparameters))})")
    _check_ranges(module.Config, specs)
    if self_play:
        from distrl.league.run import check_players

        check_players(system, module, spec, sys_cfg, program, run_cfg, "a population that plays itself")
    if member_runtime is None:
        member_runtime = "inline" if runtime == "ray" and "inline" in program.runtimes else run_cfg.runtime
    if runtime == "ray" and member_runtime != "inline":
        raise ConfigError(f"on --runtime ray every member is one Ray actor running its system inline; "
                          f"--member-runtime {member_runtime} is not possible there")
    if runtime == "ray":
        from distrl.api import require_ray

        require_ray()
    pop_dir = (
        Path(run_dir)
        if run_dir
        else Path("runs") / f"pbt-{system}-{run_cfg.env.replace('/', '_')}-{time.strftime('%Y%m%d-%H%M%S')}"
    )
    prepare_run_dir(pop_dir, resume=False, force=force, marker="pbt.json")
    (pop_dir / "members").mkdir(exist_ok=True)
    saved = {"system": system, "env": run_cfg.env, "population": population, "explore": list(explore),
             "ready_steps": ready_steps, "total_steps": run_cfg.total_steps, "runtime": runtime,
             "member_runtime": member_runtime, "fraction": fraction, "resample_prob": resample_prob,
             "exploit": exploit, "explore_hyperparameters": explore_hyperparameters, "seed": seed,
             "settings": settings, "self_play": bool(self_play)}
    _write_json(pop_dir / "pbt.json", saved)
    return _run(pop_dir, saved, resume=False, log=log)


def _run(pop_dir: Path, saved: dict, resume: bool, log) -> dict[str, Any]:
    specs = [Explore.parse(text) for text in saved["explore"]]
    n = saved["population"]
    rng = np.random.default_rng(saved["seed"])
    state = _read_json(pop_dir / "state.json", "") if resume and (pop_dir / "state.json").is_file() else None
    reported = [None] * n  # each member's score as the session before last reported it (state.json)
    if state is not None:
        try:
            # scores are not carried over for the ranking: a member is ranked once it has reported (and kept a
            # snapshot) in this session; env steps and done come from each member's own checkpoint as it reports.
            # A member that reports nothing in this session (a finished population resumed) keeps its last score
            # in state.json and the summary.
            records = [MemberRecord({k: float(v) for k, v in r["hyperparameters"].items()}, int(r["env_steps"]),
                                    node=str(r.get("node", "")))
                       for r in state["members"]]
            reported = [_score(r.get("score")) for r in state["members"]]
            rng.bit_generator.state = state["rng"]
        except (KeyError, TypeError, ValueError):
            raise ConfigError(f"cannot resume: {pop_dir / 'state.json'} is not a population state") from None
        if len(records) != n or len(reported) != n:
            raise ConfigError(f"cannot resume: state.json holds {len(records)} members, pbt.json {n}")
        from distrl import config as config_mod
        from distrl.agents.registry import get_system

        for i, r in enumerate(records):  # the values a member resumes with get the checks a --set would
            if not {s.name for s in specs} <= set(r.hyperparameters) or r.env_steps < 0:
                raise ConfigError(f"cannot resume: state.json's member {i} does not match pbt.json's --explore "
                                  f"({sorted(r.hyperparameters)}, {r.env_steps} env steps)")
            try:
                config_mod.build(get_system(saved["system"]).Config, r.hyperparameters)
            except ConfigError as e:
                raise ConfigError(f"cannot resume: state.json's member {i}: {e}") from None
    else:
        records = [MemberRecord({s.name: s.sample(rng) for s in specs}) for _ in range(n)]
    hyper_names = [s.name for s in specs]
    try:
        logs = _Logs(pop_dir, hyper_names)
    except (KeyError, TypeError, ValueError, csv.Error) as e:
        raise ConfigError(f"cannot resume: {pop_dir}'s population.csv or lineage.csv is damaged "
                          f"({type(e).__name__}: {str(e)[:120]}); restore it or start the population anew") from None
    games = None
    if saved.get("self_play"):
        from distrl.pbt.self_play import PopulationGames

        games = PopulationGames(pop_dir.resolve(), saved)
    members, again = [], []  # each member's settings, and whether it resumes
    for i in range(n):
        member_dir = pop_dir / "members" / f"m{i}"
        has_checkpoint = latest_checkpoint(member_dir / "checkpoints") is not None
        if resume and not has_checkpoint and records[i].env_steps > 0:  # trained once: never silently from step 0
            raise ConfigError(f"cannot resume: member m{i} trained {records[i].env_steps:,} env steps (state.json) but "
                              f"{member_dir} holds no checkpoint; restore it or start the population anew")
        settings = {**SLICED, **saved["settings"], "env": saved["env"], "run_dir": str(member_dir),
                    "seed": saved["seed"] + i, "total_steps": saved["total_steps"], "runtime": saved["member_runtime"]}
        members.append(settings)
        again.append(resume and has_checkpoint)
    started, pool = False, None

    def save_state() -> None:
        _write_json(
            pop_dir / "state.json",
            {
                "members": [
                    {
                        "hyperparameters": m.hyperparameters,
                        "env_steps": m.env_steps,
                        "score": _fmt(m.score) if math.isfinite(m.score) else _fmt(reported[i]),
                        "node": m.node,
                    }
                    for i, m in enumerate(records)
                ],
                "rng": rng.bit_generator.state,
            },
        )

    def on_ready(i: int, r: MemberRecord) -> None:
        logs.ready(controller, i, r)
        if games is not None:
            logs.games(controller, i, r, games)
        if log is not None:
            log(f"member {i}: {r.env_steps:,} env steps, score {r.score:.1f}, " +
                ", ".join(f"{k}={r.hyperparameters.get(k, float('nan')):.4g}" for k in hyper_names))

    controller = Controller(None, records, saved["ready_steps"], saved["total_steps"],
                            perturber(specs, saved["resample_prob"]), rng, fraction=saved["fraction"],
                            exploit=saved["exploit"], explore=saved["explore_hyperparameters"],
                            on_ready=on_ready, on_exploit=logs.exploit, on_decided=save_state)
    if resume:  # its rows go on from the clock of the session before, as a resumed run's metrics do
        controller.started -= last_wall(*(pop_dir / name for name in ("population.csv", "lineage.csv", "games.csv")))
    interrupted = False
    try:
        if saved["runtime"] == "ray":
            from distrl.pbt.members import RayPool
            from distrl.runtime.backends.ray import connect_ray

            started = connect_ray(saved["settings"].get("ray_address") or os.environ.get("RAY_ADDRESS"), n)
        if games is not None:  # hosted where the members' games run (on Ray, once connected: at its node address)
            games.open()
            for i, settings in enumerate(members):
                settings.update(games.member_settings(i, saved["env"]))
        makers = [partial(make_member_trainer, saved["system"], settings) for settings in members]
        if saved["runtime"] == "ray":
            pool = RayPool(makers, again, games.publish if games is not None else None)
        else:
            from distrl.pbt.members import LocalPool

            pool = LocalPool(makers, again, games.publish if games is not None else None)
        controller.pool = pool
        on_disk = _read_json(pop_dir / "pbt.json", "") if resume else saved
        if on_disk["total_steps"] != saved["total_steps"]:  # grown: recorded once every check passed
            _write_json(pop_dir / "pbt.json", {**on_disk, "total_steps": saved["total_steps"]})
        for i, r in enumerate(records):  # the drawn (or last explored) values reach each member before it trains
            pool.set_hyperparameters(i, r.hyperparameters)
        controller.run()
    except KeyboardInterrupt:
        interrupted = True
    finally:
        if pool is not None:
            pool.close()  # each member writes its checkpoint and summary
        if games is not None:
            games.close()
        if started:
            import ray

            ray.shutdown()
    shown = [r if math.isfinite(r.score) or last is None else dataclasses.replace(r, score=last)
             for r, last in zip(records, reported)]
    summary = _summary(pop_dir, saved, shown, logs, interrupted)
    if games is not None:
        summary["self_play"] = games.summary()
    _write_json(pop_dir / "summary.json", summary)
    return summary


class _Logs:
    def __init__(self, pop_dir: Path, hyper_names: list[str]):
        self.pop_dir, self.names = pop_dir, hyper_names
        self.schedules: dict[int, list[dict]] = {}
        self.exploits = 0
        path = pop_dir / "population.csv"
        if not path.is_file():
            _append(path, ["wall_s", "member", "env_steps", "score", "node", *hyper_names])
        path = pop_dir / "lineage.csv"
        if not path.is_file():
            _append(path, ["wall_s", "member", "env_steps", "source", "member_score", "source_score", "before", "after",
                           "checksum"])
        for row in _rows(pop_dir / "population.csv"):
            self.schedules.setdefault(int(row["member"]), []).append(
                {"env_steps": int(row["env_steps"]), **{k: float(row[k]) for k in hyper_names}})
        self.exploits = len(_rows(pop_dir / "lineage.csv"))

    def ready(self, controller: Controller, i: int, r: MemberRecord) -> None:
        wall = round(time.perf_counter() - controller.started, 3)
        _append(self.pop_dir / "population.csv", [wall, i, r.env_steps, _fmt(r.score), r.node,
                                                  *[r.hyperparameters[k] for k in self.names]])
        self.schedules.setdefault(i, []).append(
            {"env_steps": r.env_steps, **{k: r.hyperparameters[k] for k in self.names}}
        )

    def games(self, controller: Controller, i: int, r: MemberRecord, games) -> None:
        path = self.pop_dir / "games.csv"
        if not path.is_file():
            _append(path, ["wall_s", "member", "env_steps", "wins", "draws", "losses", "rating"])
        rating = games.summary()["ratings"][games.id(i)]
        _append(path, [round(time.perf_counter() - controller.started, 3), i, r.env_steps, *games.results(i), rating])

    def exploit(self, e: dict) -> None:
        self.exploits += 1
        _append(
            self.pop_dir / "lineage.csv",
            [
                e["wall_s"],
                e["member"],
                e["env_steps"],
                e["source"],
                _fmt(e["member_score"]),
                _fmt(e["source_score"]),
                json.dumps(e["before"]),
                json.dumps(e["after"]),
                e["checksum"],
            ],
        )


def _summary(pop_dir: Path, saved: dict, records: list[MemberRecord], logs: _Logs, interrupted: bool) -> dict:
    best = int(np.argmax([r.score for r in records]))
    return {
        "system": saved["system"],
        "env": saved["env"],
        "population": saved["population"],
        "runtime": saved["runtime"],
        "env_steps_total": int(sum(r.env_steps for r in records)),
        "best_member": best,
        "best_run_dir": str(pop_dir / "members" / f"m{best}"),
        "best_score": _fmt(records[best].score),
        "best_hyperparameters": records[best].hyperparameters,
        "best_schedule": logs.schedules.get(best, []),
        "exploits": logs.exploits,
        "members": [
            {
                "member": i,
                "env_steps": r.env_steps,
                "score": _fmt(r.score),
                "hyperparameters": r.hyperparameters,
                "node": r.node,
            }
            for i, r in enumerate(records)
        ],
        "nodes": len({r.node for r in records if r.node}),
        "interrupted": interrupted,
        "run_dir": str(pop_dir),
    }


def _whole(x) -> bool:
    """A budget: a whole number of env steps, at least 1."""
    return isinstance(x, int) and not isinstance(x, bool) and x >= 1


def _score(x) -> float | None:
    """A score state.json holds: a finite number, or None (none reported yet)."""
    if x is None:
        return None
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x):
        raise ValueError(f"a member's score is {x!r}")
    return float(x)


def _fmt(x):
    return round(x, 4) if isinstance(x, float) and math.isfinite(x) else None
