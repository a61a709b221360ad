"""``distrl bench``: run a suite's cells one after another (never two at once: they would share the cores and
measure each other), with the machine's ceiling measured before the first cell that needs it, and write the
report.

Everything a finished cell measured is kept in ``OUT/cells/<cell>/result.json`` (ceilings in
``OUT/ceilings/``): after an interruption, ``--resume`` keeps those and runs only what is missing or failed.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from distrl.bench import ceiling as ceiling_mod
from distrl.bench import machine as machine_mod
from distrl.bench import peers as peers_mod
from distrl.bench import report
from distrl.bench.cell import first_crossing, run_cell, steady_sps
from distrl.bench.suite import SUITES, SYSTEM_ENVS, THRESHOLDS, Cell, cells
from distrl.errors import ConfigError
from distrl.runtime.run.stop_signals import stop_signals

DEMO_EPISODES = 20  # R2D3's demonstrations: the scripted MountainCar controller (datasets/demonstrators.py)


def _write_json(path: Path, data) -> None:
    """Whole or not at all: a killed bench leaves no half-written result to resume from."""
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data))
    os.replace(tmp, path)


def _read_json(path: Path):
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def check_args(suite: str, systems: list[str] | None, runtimes: list[str] | None, seeds: list[int] | None,
               max_wall_s: float | None, ceiling_s: float, eval_episodes: int) -> None:
    """Every bad value is one line naming what is valid, before anything is written."""
    from distrl.core.program import RUNTIMES

    known = sorted({s for s, _ in SYSTEM_ENVS})
    if suite not in SUITES:
        raise ConfigError(f"unknown suite {suite!r} (valid: {', '.join(SUITES)})")  # repr: one line whatever was typed
    for s in systems or []:
        if s not in known:
            raise ConfigError(f"unknown system {s!r} for the bench (valid: {', '.join(known)})")
    for r in runtimes or []:
        if r not in RUNTIMES:
            raise ConfigError(f"unknown runtime {r!r} (valid: {', '.join(RUNTIMES)})")
    if seeds is not None and (not seeds or any(s < 0 for s in seeds)):
        raise ConfigError("--seeds must be one or more integers >= 0")
    if max_wall_s is not None and not max_wall_s > 0:
        raise ConfigError(f"--max-wall-s must be > 0 seconds (got {max_wall_s})")
    if not ceiling_s > 0:
        raise ConfigError(f"--ceiling-s must be > 0 seconds (got {ceiling_s})")
    if eval_episodes < 1:
        raise ConfigError(f"--episodes must be >= 1 (got {eval_episodes})")


def prepare_out(out: Path, resume: bool, force: bool) -> None:
    if resume and force:
        raise ConfigError("--resume and --force exclude each other")
    if out.exists() and not out.is_dir():
        raise ConfigError(f"--out {str(out)!r} is a file, not a folder")
    if resume:
        if not (out / "bench.json").is_file():
            raise ConfigError(f"--resume: '{out}' holds no bench run (no bench.json)")
        return
    if out.is_dir() and any(out.iterdir()):
        if not force:
            raise ConfigError(f"--out {str(out)!r} is not empty (--resume continues the bench in it, --force replaces "
                              "it)")
        if not (out / "bench.json").is_file():
            raise ConfigError(f"--force: '{out}' holds no bench run (no bench.json); not deleting it")
        shutil.rmtree(out)


def _demos(out: Path) -> str:
    import distrl

    folder = out / "inputs" / "mountaincar-demos"
    if not (folder / "data").is_dir():
        distrl.record(folder, policy="distrl.datasets.demonstrators:mountain_car", env="MountainCar-v0",
                      episodes=DEMO_EPISODES, force=True)
    return str(folder)


def _ceiling(out: Path, cell: Cell, seconds: float) -> dict:
    """Measured once per (system, env, settings, acting components, one process or not) and kept for the cells
    that share it (the seeds, the runtimes other than ``inline``); a cell whose settings changed since (a bench
    resumed after a preset changed) is measured anew, not given the ceiling of other settings."""
    from distrl.api import plan_run

    settings = dict(cell.settings, **({"demos": str(out / "inputs" / "mountaincar-demos")} if cell.needs else {}))
    n = ceiling_mod.actor_count(cell.system, settings) or 1
    kind = "inline" if cell.runtime == "inline" else "processes"
    key = hashlib.sha256(json.dumps(settings, sort_keys=True, default=str).encode()).hexdigest()[:10]
    path = out / "ceilings" / f"{cell.system}__{cell.env.replace('/', '_')}__{key}__{n}__{kind}__{seconds:g}s.json"
    saved = _read_json(path)
    if saved is None:
        program = plan_run(cell.system, cell.env, **settings)[4]
        saved = ceiling_mod.measure(cell.system, cell.env, settings, n, seconds, program.make_learner is not None,
                                    runtime=cell.runtime)
        if not saved["learner_missing"]:  # a learner that did not update in time is measured again next cell
            path.parent.mkdir(parents=True, exist_ok=True)
            _write_json(path, saved)
    return saved


def _peer(out: Path, name: str, env: str, seed: int, eval_episodes: int, max_wall_s: float | None) -> dict:
    stem = f"{name}__{env.replace('/', '_')}__s{seed}"
    path = out / "peers" / f"{stem}.json"
    saved = _read_json(path)
    if saved is not None and "error" not in saved:
        return saved
    path.parent.mkdir(parents=True, exist_ok=True)
    raw = out / "peers" / f"{stem}.raw.json"
    algo = name.split("-", 1)[1]
    started = time.time()  # the command's start, as a distrl cell's
    proc = subprocess.run([sys.executable, "-m", "distrl.bench.peers", algo, env, str(seed), str(raw),
                           str(eval_episodes), str(THRESHOLDS[env]), *([str(max_wall_s)] if max_wall_s else [])],
                          capture_output=True, text=True, check=False)
    if proc.returncode == 130 or proc.returncode == -2:
        raise KeyboardInterrupt
    if proc.returncode != 0:
        tail = proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else f"exit code {proc.returncode}"
        result = {"peer": name, "env": env, "seed": seed, "error": tail[-500:]}
    else:
        result = json.loads(raw.read_text())
        raw.unlink()
        result["sps"] = steady_sps(result["curve"], result["env_steps"] / max(result["train_s"], 1e-9))
        crossed = first_crossing(result["curve"], THRESHOLDS[env])
        result["threshold_env_steps"], result["threshold_train_s"] = crossed if crossed else (None, None)
        greedy = next(((steps, at) for steps, at, mean in result["greedy_evals"] if mean >= THRESHOLDS[env]), None)
        result["threshold_greedy_env_steps"] = greedy[0] if greedy else None
        result["threshold_greedy_command_s"] = round(greedy[1] - started, 2) if greedy else None
        # not there when the cap stopped it: its time to the threshold is more than the command's
        result["capped_command_s"] = (round(result["startup_s"] + result["train_s"], 2)
                                      if greedy is None and max_wall_s and result["train_s"] >= max_wall_s else None)
    _write_json(path, result)
    return result


def run_bench(out: str | Path, suite: str = "quick", systems: list[str] | None = None,
              runtimes: list[str] | None = None, seeds: list[int] | None = None, max_wall_s: float | None = None,
              ceiling_s: float = 4.0, eval_episodes: int = 20, peers: bool = False, resume: bool = False,
              force: bool = False, pong: bool = True, progress: bool = True,
              log: Callable[[str], None] | None = None, command: str = "") -> dict:
    """Run the suite into ``out`` and write its report; returns ``{"report": path, "cells": n, ...}``."""
    check_args(suite, systems, runtimes, seeds, max_wall_s, ceiling_s, eval_episodes)
    no_atari = False  # asked for the Pong smoke cell without the atari extra: left out, and the report says so
    if pong and (not systems or "impala" in systems):
        try:
            import ale_py  # noqa: F401
        except ImportError:
            pong, no_atari = False, True
    peers = peers or suite == "peers"
    if suite in ("beyond", "peers"):
        try:
            import Box2D  # noqa: F401  (LunarLander)
        except ImportError:
            raise ConfigError('the beyond suite runs LunarLander, which needs the box2d extra: '
                              'pip install -e ".[box2d]"') from None
    if peers and not peers_mod.available():
        raise ConfigError('--peers needs Stable-Baselines3: pip install -e ".[peers]"')
    todo = cells(suite, systems, runtimes, seeds, max_wall_s, pong=pong, peers=peers)
    if not todo:
        raise ConfigError("no cell matches these --systems and --runtimes")
    out = Path(out)
    prepare_out(out, resume, force)
    arguments = {"suite": suite, "systems": systems, "runtimes": runtimes, "seeds": seeds, "max_wall_s": max_wall_s,
                 "ceiling_s": ceiling_s, "eval_episodes": eval_episodes, "peers": peers, "pong": pong}
    if resume:  # the same bench, continued: its command and the machine its cells ran on
        saved = _read_json(out / "bench.json") or {}
        if saved.get("arguments") != arguments:
            raise ConfigError(f"--resume continues the bench in '{out}' with its own arguments "
                              f"({saved.get('command')}); "
                              "these differ (a new --out, or --force, starts another)")
        command, machine = saved["command"], saved["machine"]
    else:
        command, machine = command or f"distrl bench --suite {suite}", machine_mod.describe()
    out.mkdir(parents=True, exist_ok=True)
    _write_json(out / "bench.json", {"command": command, "arguments": arguments, "machine": machine,
                                     "cells": [c.key for c in todo]})
    peer_seeds = sorted({c.seed for c in todo})
    peer_envs = sorted({c.env for c in todo if c.threshold is not None})
    peer_runs = [(name, env, seed) for name in peers_mod.PEERS for env in peer_envs if peers_mod.runs_on(name, env)
                 for seed in peer_seeds] if peers else []
    total = len(todo) + len(peer_runs)
    say = log or (lambda line: None)
    results, peer_results = [], []
    t0 = time.time()
    with stop_signals(), _Progress(total, progress) as bar:
        for cell in todo:
            folder = out / "cells" / cell.key
            saved = _read_json(folder / "result.json")
            if saved is not None and "error" not in saved and saved["cell"] == cell.to_dict():
                results.append(saved)
                bar.advance(f"{cell.key} (kept)")
                continue
            folder.mkdir(parents=True, exist_ok=True)
            try:
                bar.describe(f"{cell.key}: ceiling")
                inputs = {"demos": _demos(out)} if cell.needs else {}
                ceiling = _ceiling(out, cell, ceiling_s)
                bar.describe(f"{cell.key}: training")
                result = run_cell(cell, folder, eval_episodes, inputs)
            except Exception as e:  # noqa: BLE001 - a cell that cannot be measured is reported, the bench goes on
                result = {"cell": cell.to_dict(), "key": cell.key, "error": f"{type(e).__name__}: {e}"[:500]}
            if "error" not in result:
                result["ceiling"] = {k: v for k, v in ceiling.items() if k != "bytes_partial"}
            _write_json(folder / "result.json", result)
            results.append(result)
            say(_line(result))
            bar.advance(cell.key)
        for name, env, seed in peer_runs:
            bar.describe(f"{name} {env} seed {seed}")
            cap = next((c.max_wall_s for c in todo if c.env == env and c.max_wall_s), None)  # the cells' own cap
            peer_results.append(_peer(out, name, env, seed, eval_episodes, cap))
            bar.advance(name)
    notes = ["The Pong throughput cell was left out: it needs the atari extra (pip install -e \".[atari]\")."] \
        if no_atari else []
    files = report.write(out, machine, command, results, peer_results, notes)
    return {"report": str(out / "report.md"), "files": [str(f) for f in files], "cells": len(results),
            "failed": sum("error" in r for r in results) + sum("error" in p for p in peer_results),
            "wall_s": round(time.time() - t0, 1), "pong": pong}


def _line(r: dict) -> str:
    c = r["cell"]
    if "error" in r:
        return f"{c['system']} {c['env']} {c['runtime']} seed {c['seed']}: failed: {r['error']}"
    ceiling = r["ceiling"]["ceiling_sps"]
    ratio = f" ({r['sps'] / ceiling:.2f} of the ceiling)" if ceiling else ""
    reached = (
        f"threshold at {r['threshold_train_s']:.1f} s"
        if r["threshold_train_s"] is not None
        else "threshold not reached"
    )
    return (f"{c['system']} {c['env']} {c['runtime']} seed {c['seed']}: {r['sps']:,.0f} env steps/s{ratio}, {reached}, "
            f"greedy eval {r['final_eval']}")


class _Progress:
    """A rich progress bar over the cells (none when ``enabled`` is false or stderr is not a terminal)."""

    def __init__(self, total: int, enabled: bool):
        self.total, self.enabled = total, enabled and sys.stderr.isatty()

    def __enter__(self):
        if self.enabled:
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
            )

            self.bar = Progress(
                TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn()
            )
            self.bar.start()
            self.task = self.bar.add_task("bench", total=self.total)
        return self

    def describe(self, text: str) -> None:
        if self.enabled:
            self.bar.update(self.task, description=text)

    def advance(self, text: str) -> None:
        if self.enabled:
            self.bar.update(self.task, advance=1, description=text)

    def __exit__(self, *exc):
        if self.enabled:
            self.bar.stop()
        return False

