"""One cell of the benchmark: ``distrl train`` in its own process, as a user runs it, watched from outside.

The command's start is taken before the process is spawned, so "time to threshold from the command"
includes Python's and the runtime's start-up (Ray's too); "from training start" is the trainer's own clock
(``clock_started_at`` in summary.json). Peak memory is the largest sum, over the command's process tree,
of each process's proportional set size (shared-memory pages split between the processes that map them,
so the replay a runtime shares is counted once), sampled every 2 s: reading a process's page map costs
~8 ms, and a sampler that ran every 0.25 s took 13% of a core from the run it measured.
"""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from distrl.bench.suite import Cell
from distrl.plotting import read_curve
from distrl.runtime.run.run_dir import read_config

SAMPLE_S = 2.0  # seconds between peak-memory samples


def _tree_memory(proc) -> float:
    """Bytes of the process tree: PSS where the kernel gives it, else RSS."""
    import psutil

    total = 0.0
    try:
        procs = [proc] + proc.children(recursive=True)
    except psutil.Error:
        return 0.0
    for p in procs:
        try:
            info = p.memory_full_info()
            total += getattr(info, "pss", info.rss)
        except psutil.Error:
            continue
    return total


def steady_sps(points: list[tuple[int, float, float]], fallback: float) -> float:
    """Env steps/s after the first quarter of the rows (start-up and warm-up left out)."""
    rows = points[len(points) // 4:]
    if len(rows) < 2 or rows[-1][1] <= rows[0][1]:
        return fallback
    return (rows[-1][0] - rows[0][0]) / (rows[-1][1] - rows[0][1])


def first_crossing(points: list[tuple[int, float, float]], threshold: float | None):
    """The first row whose training return reaches ``threshold``: (env steps, training s), or None."""
    if threshold is None:
        return None
    for steps, wall, value in points:
        if not math.isnan(value) and value >= threshold:
            return steps, wall
    return None


def first_greedy_crossing(run_dir: Path, threshold: float | None):
    """The first periodic greedy evaluation (``eval_interval_steps``) at ``threshold``: (env steps, training s of
    the metrics row that logged it, the evaluation's time included), or None."""
    import csv

    path = run_dir / "metrics.csv"
    if threshold is None or not path.is_file():
        return None
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            value = row.get("eval_return_mean") or ""
            if value and not math.isnan(float(value)) and float(value) >= threshold:
                return int(float(row["env_steps"])), float(row["wall_s"])
    return None


def stop(proc: subprocess.Popen, grace_s: float = 60.0) -> None:
    """SIGINT (the run checkpoints and stops its processes), then, past ``grace_s`` or on a second interrupt,
    SIGKILL: the run is never left behind."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(grace_s)
        except subprocess.TimeoutExpired:
            pass
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def run_cell(cell: Cell, folder: Path, eval_episodes: int, inputs: dict[str, str]) -> dict:
    """Train ``cell`` into ``folder/run``, evaluate the greedy policy, and return the cell's figures."""
    import psutil

    import distrl

    run_dir = folder / "run"
    settings = dict(cell.settings)
    if cell.needs:
        settings["demos"] = inputs[cell.needs]
    if cell.total_steps is not None:
        settings["total_steps"] = cell.total_steps
    if cell.max_wall_s is not None:
        settings["max_wall_s"] = cell.max_wall_s
    cmd = [sys.executable, "-m", "distrl", "train", cell.system, "--env", cell.env, "--runtime", cell.runtime,
           "--seed", str(cell.seed), "--run-dir", str(run_dir), "--force", "--quiet", "--json"]
    for key, value in settings.items():
        cmd += ["--set", f"{key}={value}"]
    env = dict(os.environ, RAY_AUTH_MODE=os.environ.get("RAY_AUTH_MODE", "token"))
    started = time.time()
    # its output goes to files (a pipe nobody reads fills up and blocks the run); its own session, so a Ctrl-C on
    # the terminal reaches the bench only, which stops the run once (a second SIGINT would cut its checkpoint short)
    with open(folder / "stdout.log", "w") as out, open(folder / "stderr.log", "w") as err:
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, text=True, env=env, start_new_session=True)
    watched, peak, sampled = psutil.Process(proc.pid), 0.0, time.monotonic() - SAMPLE_S + 1.0
    try:
        while proc.poll() is None:
            if time.monotonic() - sampled >= SAMPLE_S:
                peak, sampled = max(peak, _tree_memory(watched)), time.monotonic()
            try:
                proc.wait(0.25)
            except subprocess.TimeoutExpired:
                pass
    except BaseException:  # the bench is stopping: the run ends with its checkpoint, as on Ctrl-C, and nothing stays
        stop(proc)
        raise
    command_s = time.time() - started
    stdout, stderr = (folder / "stdout.log").read_text(), (folder / "stderr.log").read_text()
    if proc.returncode == 130:
        raise KeyboardInterrupt
    failed = None  # recorded, and run again by --resume
    if proc.returncode != 0 or not stdout.strip():
        failed = stderr.strip().splitlines()[-1] if stderr.strip() else f"exit code {proc.returncode}, no summary"
    elif not (run_dir / "metrics.csv").is_file():
        failed = "the run wrote no metrics row"
    if failed is not None:
        return {"cell": cell.to_dict(), "key": cell.key, "error": failed[-500:], "command_s": round(command_s, 2)}
    summary = json.loads(stdout.strip().splitlines()[-1])
    points = read_curve(run_dir)
    offset = summary["clock_started_at"] - started  # the command's start-up before the trainer's clock
    crossed = first_crossing(points, cell.threshold)
    greedy = first_greedy_crossing(run_dir, cell.threshold) if "eval_interval_steps" in cell.settings else None
    final_eval = snapshot = None
    if cell.threshold is not None:  # learning cells; a smoke cell has nothing to evaluate
        played = distrl.evaluate(run_dir, episodes=eval_episodes)  # the best evaluated weights where kept (R2D2)
        final_eval, snapshot = played["mean_return"], played["snapshot"]
    return {
        "cell": cell.to_dict(), "key": cell.key, "env_steps": summary["env_steps"], "train_s": summary["wall_s"],
        "command_s": round(command_s, 2), "startup_s": round(offset, 2),
        "sps": round(steady_sps(points, summary["sps"]), 1), "final_train_return": summary["episode_return_mean"],
        "final_eval": final_eval, "eval_episodes": eval_episodes if final_eval is not None else 0,
        "eval_snapshot": snapshot,
        "threshold_env_steps": crossed[0] if crossed else None,
        "threshold_train_s": round(crossed[1], 2) if crossed else None,
        "threshold_command_s": round(crossed[1] + offset, 2) if crossed else None,
        "threshold_greedy_env_steps": greedy[0] if greedy else None,
        "threshold_greedy_command_s": round(greedy[1] + offset, 2) if greedy else None,
        "learner_wait_frac": summary["learner_wait_frac"], "policy_lag_mean": summary["policy_lag_mean"],
        "bottleneck": summary["bottleneck"], "bytes_per_env_step": summary.get("bytes_per_env_step"),
        "peak_memory_mb": round(peak / 2**20, 1), "actor_restarts": summary["actor_restarts"],
        # what the run chose for the learner's arithmetic (a preset's or a setting's "auto" is recorded as given)
        "precision": read_config(run_dir)["run"].get("precision"),
        "curve": points,
    }
