"""The bench's outputs: ``report.md`` (tables for a person and the docs pages), ``report.json`` (everything,
for a program), ``curves-<env>.png`` (learning curves against env steps and wall time) and
``throughput.png`` (each cell's env steps/s against the machine's ceiling)."""

from __future__ import annotations

import json
import math
from collections import defaultdict
from pathlib import Path

from distrl.bench.machine import one_line
from distrl.bench.stats import spread


def _n(x, fmt: str = ",.0f", none: str = "—") -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return none
    return format(x, fmt)


def _cell_text(text: str) -> str:
    """Free text inside a markdown table cell: no column breaks, one line."""
    return text.replace("|", "/").replace("\n", " ")


def _ratio(r: dict) -> float | None:
    """Env steps/s over the actors-alone rate (a): 1.0 means the learner and the transport cost the actors nothing."""
    c = r.get("ceiling") or {}
    return r["sps"] / c["actors_alone_sps"] if c.get("actors_alone_sps") else None


def _vs_ceiling(r: dict) -> float | None:
    """Env steps/s over the combined ceiling 1/(1/a + 1/b): how near the run comes to acting and learning taking turns
    on the same cores (a learner-bound cell can read above 1, its learner's own rate being in the ceiling)."""
    c = r.get("ceiling") or {}
    return r["sps"] / c["ceiling_sps"] if c.get("ceiling_sps") else None


def _verdict(r: dict) -> str:
    """The bottleneck, and how far it holds the actors back where the run steps under 0.9 of their alone rate."""
    ratio = _ratio(r)
    if ratio is None or ratio >= 0.9 or not r["sps"]:
        return r["bottleneck"]
    if r["bottleneck"] == "learner-bound":
        return f"learner-bound: the actors could step {1 / ratio:.1f}x faster"
    # (on inline acting and learning take turns in one process; elsewhere the transport or the cores' sharing)
    return f"{r['bottleneck']} ({1 / ratio:.1f}x below the actors alone)"


def _arithmetic(r: dict) -> str:
    """A mark on a cell whose learner computed in bfloat16 (``precision=bf16``, or what ``auto`` chose on a CPU with
    bf16 arithmetic: the Atari preset's); reports from before the record carried ``precision`` show none."""
    return " (bf16 learner)" if r.get("precision") == "bf16" else ""


def _best(*rs: dict) -> str:
    """A mark on greedy evals that played a run's best evaluated weights (``run_dir/best``: R2D2's and SEED + R2D2's
    default), not its last checkpoint's; on a spread row, how many of its seeds did. Reports from before the record
    carried ``eval_snapshot`` played the last."""
    n = sum(r.get("eval_snapshot") == "best" for r in rs)
    if not n:
        return ""
    return " (best weights)" if len(rs) == 1 else f" (best weights: {n} of {len(rs)})"


def cell_rows(results: list[dict]) -> list[str]:
    lines = [
        "| system | env | runtime | seed | env steps | env steps/s | (a) actors alone | (b) learner alone | "
        "ceiling | ratio (sps / a) | sps / ceiling | to threshold: env steps | from training start s | "
        "from command s | greedy eval | learner wait | policy lag | bottleneck | bytes/env step | peak memory MB |",
        "|" + "---|" * 20,
    ]
    for r in results:
        c = r["cell"]
        if "error" in r:
            lines.append(f"| {c['system']} | {c['env']} | {c['runtime']} | {c['seed']} | failed: "
                         f"{_cell_text(r['error'])} |"
                         + " |" * 15)
            continue
        ceiling = r.get("ceiling") or {}
        reached = r["threshold_env_steps"] is not None
        never = "not reached" if c["threshold"] is not None else "n/a"
        # A3C/GORILA exchange through a parameter server, SEED through its inference stream: not counted yet
        # (reports from before parameter-server and inference traffic was counted mark those cells)
        bytes_ = _n(r["bytes_per_env_step"], ",.1f") if not r.get("bytes_partial") else "not counted"
        if r["cell"]["runtime"] == "inline":
            bytes_ = "0 (one process)"
        missing = "learner not measured" if ceiling.get("learner_missing") else "—"
        lines.append(
            f"| {c['system']}{_arithmetic(r)} | {c['env']} | {c['runtime']} | {c['seed']} | {r['env_steps']:,} | "
            f"{_n(r['sps'])} | {_n(ceiling.get('actors_alone_sps'))} | {_n(ceiling.get('learner_alone_sps'))} | "
            f"{_n(ceiling.get('ceiling_sps'), ',.0f', missing)} | "
            f"{_n(_ratio(r), '.2f')} | {_n(_vs_ceiling(r), '.2f')} | "
            f"{_n(r['threshold_env_steps']) if reached else never} | {_n(r['threshold_train_s'], '.1f', never)} | "
            f"{_n(r['threshold_command_s'], '.1f', never)} | {_n(r['final_eval'], '.1f')}{_best(r)} | "
            f"{_n(r['learner_wait_frac'], '.2f')} | {_n(r['policy_lag_mean'], '.1f')} | {_verdict(r)} | {bytes_} | "
            f"{_n(r['peak_memory_mb'])} |"
        )
    return lines


def spread_rows(results: list[dict]) -> list[str]:
    """Per (system, env, runtime) over its seeds: the budget (the cell's, else the most env steps a seed ran; with
    the seeds that did not run it whole, ``_short``), greedy eval and time to threshold, min / median / max and the
    IQM with its 95% bootstrap interval (three seeds or more)."""
    groups = defaultdict(list)
    for r in results:
        if "error" not in r and r["cell"]["threshold"] is not None:
            groups[(r["cell"]["system"], r["cell"]["env"], r["cell"]["runtime"])].append(r)
    lines = ["| system | env | runtime | seeds | env steps | greedy eval min / median / max | greedy eval IQM [95% CI] "
             "| "
             "reached threshold | training s to threshold min / median / max | env steps/s median | "
             "training s median (whole command) |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for (system, env, runtime), rs in groups.items():
        budget = rs[0]["cell"].get("total_steps")
        steps = f"{budget or max(r['env_steps'] for r in rs):,}{_short(rs, budget)}"
        ev = spread([r["final_eval"] for r in rs])
        tt = spread([r["threshold_train_s"] for r in rs])
        sps = spread([r["sps"] for r in rs])
        ci = f" [{ev['iqm_ci'][0]:.1f}, {ev['iqm_ci'][1]:.1f}]" if ev.get("iqm_ci") else ""
        lines.append(
            f"| {system} | {env} | {runtime} | {', '.join(str(r['cell']['seed']) for r in rs)} | "
            f"{steps} | "
            f"{_n(ev.get('min'), '.1f')} / {_n(ev.get('median'), '.1f')} / {_n(ev.get('max'), '.1f')}"
            f"{_best(*rs)} | "
            f"{_n(ev.get('iqm'), '.1f')}{ci} | {tt['n']} of {len(rs)} | "
            f"{_n(tt.get('min'), '.1f')} / {_n(tt.get('median'), '.1f')} / {_n(tt.get('max'), '.1f')} | "
            f"{_n(sps.get('median'))} | {_n(spread([r['train_s'] for r in rs]).get('median'), '.1f')} "
            f"({_n(spread([r['command_s'] for r in rs]).get('median'), '.1f')}) |")
    return lines


def _short(rs: list[dict], budget: int | None) -> str:
    """The seeds that did not run the whole budget, and the env steps they reached: those the wall-time cap ended
    (they ran to it), and those that ended before the cell's own budget otherwise. A spread row must not claim a
    budget its seeds did not run. (A cell without a budget of its own runs the system's default, which a run may
    overshoot by part of a chunk: the row shows the most a seed ran, and names only the seeds the cap ended.)"""
    cap = rs[0]["cell"].get("max_wall_s")
    ran_to_cap = [bool(cap) and r["train_s"] >= cap - 1.0 for r in rs]
    short = [budget is not None and r["env_steps"] < budget for r in rs]
    capped = [r for r, c, s in zip(rs, ran_to_cap, short) if c and (s or budget is None)]
    ended = [r for r, c, s in zip(rs, ran_to_cap, short) if s and not c]

    def reached(group: list[dict]) -> str:
        steps = [r["env_steps"] for r in group]
        return f"{min(steps):,}" if len(steps) == 1 else f"{min(steps):,}–{max(steps):,}"

    parts = ([f"{len(capped)} of {len(rs)} cut by the {cap:g}-s cap at {reached(capped)}"] if capped else []) + \
        ([f"{len(ended)} of {len(rs)} ended at {reached(ended)}"] if ended else [])
    return f" ({'; '.join(parts)})" if parts else ""


def _median(values: list) -> float | None:
    import statistics

    return statistics.median(values) if values and all(v is not None for v in values) else None


def _peer_time(p: dict) -> tuple[float | None, bool]:
    """A peer's seconds to the threshold, and whether that is only a bound: a peer the cap stopped short of it took
    more than its command's time."""
    if p.get("threshold_greedy_command_s") is not None:
        return p["threshold_greedy_command_s"], False
    return p.get("capped_command_s"), p.get("capped_command_s") is not None


def _when(p: dict) -> str:
    seconds, bound = _peer_time(p)
    if seconds is None:
        return "not reached"
    return f"not reached in {seconds:.1f} (the cap)" if bound else f"{seconds:.1f}"


def peer_rows(peers: list[dict], results: list[dict]) -> list[str]:
    """Each peer beside the distrl cells on its env, by one protocol (``distrl.bench.peers``): throughput, the env
    steps and seconds from the command's start to the first greedy evaluation at the threshold, and the training
    mean's time; then each distrl system's median time to the threshold against each peer's, as a factor."""
    envs = {p["env"] for p in peers}
    ours = [r for r in results if "error" not in r and r["cell"]["env"] in envs and r["cell"]["threshold"] is not None]
    lines = [
        "| library | env | seed | env steps | env steps/s | greedy at threshold: env steps | s from command | "
        "training mean at threshold: s from command | final greedy eval |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for p in peers:
        if "error" in p:
            lines.append(f"| {p['peer']} | {p['env']} | {p['seed']} | failed: {_cell_text(p['error'])} | | | | | |")
            continue
        train = p["threshold_train_s"] + p["startup_s"] if p["threshold_train_s"] is not None else None
        lines.append(f"| {p['peer']} ({p['hyperparameters']}, {p['n_envs']} envs) | {p['env']} | {p['seed']} | "
                     f"{p['env_steps']:,} | {_n(p['sps'])} | {_n(p.get('threshold_greedy_env_steps'), ',.0f', '—')} | "
                     f"{_when(p)} | {_n(train, '.1f', 'not reached')} | {_n(p['final_eval'], '.1f')} |")
    for r in ours:
        c = r["cell"]
        lines.append(f"| distrl {c['system']} ({c['runtime']}) | {c['env']} | {c['seed']} | {r['env_steps']:,} | "
                     f"{_n(r['sps'])} | {_n(r.get('threshold_greedy_env_steps'), ',.0f', '—')} | "
                     f"{_n(r.get('threshold_greedy_command_s'), '.1f', 'not reached')} | "
                     f"{_n(r['threshold_command_s'], '.1f', 'not reached')} | {_n(r['final_eval'], '.1f')} |")
    groups: dict = {}
    for r in ours:
        c = r["cell"]
        groups.setdefault((c["env"], f"{c['system']} ({c['runtime']})"), []).append(r.get("threshold_greedy_command_s"))
    rivals: dict = {}
    for p in peers:
        if "error" not in p:
            rivals.setdefault((p["env"], p["peer"]), []).append(_peer_time(p))
    pairs = [(env, name, times, peer, peer_times) for (env, name), times in groups.items()
             for (peer_env, peer), peer_times in rivals.items() if peer_env == env]
    if pairs:  # medians over seeds; a seed that never reached it leaves its median undefined
        lines += ["", "Seconds from the command's start to the first greedy evaluation at the threshold, median over "
                  "the seeds (— where a seed never reached it); the factor is the peer's time over distrl's:", "",
                  "| env | distrl | median s | peer | median s | peer / distrl |", "|---|---|---|---|---|---|"]
        for env, name, times, peer, peer_times in pairs:
            ours_s, theirs_s = _median(times), _median([t for t, _ in peer_times])
            bound = "> " if any(b for _, b in peer_times) else ""  # a capped seed: the median is a lower bound
            factor = f"{bound}{theirs_s / ours_s:.1f}x" if ours_s and theirs_s else "—"
            theirs = f"{bound}{theirs_s:.1f}" if theirs_s else "—"
            lines.append(f"| {env} | {name} | {_n(ours_s, '.1f', '—')} | {peer} | {theirs} | {factor} |")
    return lines


def markdown(machine: dict, command: str, results: list[dict], peers: list[dict], notes: list[str] = ()) -> str:
    parts = [f"# distrl bench\n\n`{command}`\n\nMachine: {one_line(machine)}\n",
             "Every cell is `distrl train SYSTEM --env ENV --runtime R --seed S` with the system's default config and "
             "budget (the beyond suite's longer budgets for some cells: `BEYOND_STEPS` in `distrl/bench/suite.py`; "
             "the env steps column says which), then `distrl eval` (greedy; a greedy eval marked \"best weights\" "
             "played the weights of the run's best periodic evaluation, R2D2's and SEED + R2D2's default, the others "
             "the last checkpoint's). Env steps/s: steady state (the first quarter of the metrics rows "
             "left out). Ceiling (same run): (a) the system's acting components alone, in as many processes as the "
             "run has, (b) its learner alone (env steps per second of learner time in a short inline run), combined "
             "as 1/(1/a + 1/b). Ratio: env steps/s over (a), so 1.0 means the learner and the transport cost the "
             "actors nothing; where it is under 0.9 the bottleneck column says how much faster the actors could "
             "step. Threshold: the mean training return of the last 100 episodes (exploration included: "
             "an epsilon ladder's training return can stay below a threshold its greedy policy passes).\n",
             *notes, "## Cells\n", *cell_rows(results), ""]
    if any(r["cell"]["seed"] != results[0]["cell"]["seed"] for r in results):
        parts += ["## Spread over seeds\n", *spread_rows(results), ""]
    if peers:
        parts += ["## Peers (same machine, same run)\n", *peer_rows(peers, results), ""]
    return "\n".join(parts) + "\n"


def write(out: Path, machine: dict, command: str, results: list[dict], peers: list[dict],
          notes: list[str] = ()) -> list[Path]:
    """Write the report's files; returns their paths."""
    (out / "report.json").write_text(json.dumps({"command": command, "machine": machine, "cells": results,
                                                 "peers": peers, "notes": list(notes)}, indent=1))
    (out / "report.md").write_text(markdown(machine, command, results, peers, notes))
    return [out / "report.json", out / "report.md", *plot(out, results, peers)]


def plot(out: Path, results: list[dict], peers: list[dict]) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from distrl.plotting import plot_curves

    written = []
    by_env = defaultdict(list)
    for r in results:
        if "error" not in r and r["cell"]["threshold"] is not None:
            by_env[r["cell"]["env"]].append((f"{r['cell']['system']} {r['cell']['runtime']} s{r['cell']['seed']}", r))
    for p in peers:
        if "error" not in p:
            by_env[p["env"]].append((f"{p['peer']} s{p['seed']}", p))
    for env, curves in by_env.items():
        threshold = next((r["cell"]["threshold"] for _, r in curves if "cell" in r), None)
        path = out / f"curves-{env.replace('/', '_')}.png"
        groups: dict = {}  # one color and one legend entry per system and runtime (or peer): seeds share
        series = []
        for label, r in curves:
            group = label.rsplit(" s", 1)[0]
            first = group not in groups
            groups.setdefault(group, plt.get_cmap("tab20")(len(groups) % 20))
            series.append((group if first else "_" + label, r["curve"], groups[group]))
        plot_curves(series, path, threshold=threshold, title=env)
        written.append(path)
    measured = [r for r in results if "error" not in r and (r.get("ceiling") or {}).get("actors_alone_sps")]
    if measured:
        fig, ax = plt.subplots(figsize=(max(6, 0.5 * len(measured) + 2), 4.5))
        labels = [f"{r['cell']['system']} {r['cell']['runtime']} "
                  f"s{r['cell']['seed']}\n{r['cell']['env'].split('/')[-1]}"
                  for r in measured]
        ax.bar(range(len(measured)), [_ratio(r) for r in measured], color="tab:blue")
        ax.axhline(1.0, color="grey", linestyle="--", linewidth=0.8)
        ax.set_xticks(range(len(measured)), labels, rotation=60, ha="right", fontsize=7)
        ax.set_ylabel("env steps/s / actors alone (a)")
        ax.set_title("throughput against the actors alone on this machine (same run)")
        fig.tight_layout()
        path = out / "throughput.png"
        fig.savefig(path, dpi=100)
        plt.close(fig)
        written.append(path)
    return written
