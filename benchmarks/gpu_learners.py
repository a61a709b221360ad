"""Learners on a GPU (issue #20): learner samples/s on the CPU and on CUDA, IMPALA and SEED on Pong end to end
against the actors-alone rate of the same machine, and a Pong learning run with a CUDA learner.

    python benchmarks/gpu_learners.py --out DIR                       # everything, on a machine with a GPU
    python benchmarks/gpu_learners.py --parts learner --seconds 3     # only the learner matrix
    python benchmarks/gpu_learners.py --readme-from REPORT.json ...   # the docs' tables, from saved reports

Parts (each writes its rows into DIR/gpu.json and DIR/gpu.md as soon as it has them, so a run cut short
keeps what it measured):

- ``learner``: IMPALA's learner on Pong batches (Nature CNN; ``batch_unrolls`` unrolls of 8 envs x 20 steps),
  samples/s over ``--seconds`` after a warm-up, for the CPU (one thread, every core) and cuda fp32/bf16, and
  cuda with torch.compile of the network's layers (at ``--compile-batches``; compile time in the warm-up).
- ``loop``: the trainer's iteration around IMPALA's learner (take a batch, stage it on the device, update,
  publish the weights to a host buffer) over 4 distinct batches in turn, with ``overlap`` off (stage in the
  update, ``get_weights`` after it) and on (the next batch staged on a thread while the update runs; weights
  copied to the host in stream order and handed over after the next update), samples/s.
- ``e2e``: IMPALA on ``local`` with the learner on the CPU and on CUDA, and SEED with its inference server
  and learner on CUDA, ``--actors`` actor processes each; steady-state env steps/s (first quarter of the rows
  left out) over the actors-alone rate of the same number of processes, measured in the same run.
- ``replay``: Ape-X DQN on Pong on ``local`` with a CUDA learner, ``overlap_transfers`` off and on (on: the
  next sample drawn from the replay and staged on a thread while the update runs), ``--actors`` actors for
  ``--e2e-seconds`` each; learner updates/s and env steps/s over the second half of the rows (the replay
  has filled to ``min_replay`` by then).
- ``pong``: IMPALA with a CUDA learner on Pong for ``--pong-seconds``; its curve (``pong_curve.png``) and
  metrics (``pong_leg/metrics.csv``). A run longer than one machine's lease goes in legs: each leg writes what the next
  needs into ``DIR/pong_leg/`` (config, metrics, the last checkpoint: five flat files, each under 16 MiB, so they come
  back from a device machine), and ``--pong-resume FOLDER`` continues from such a folder (``distrl train
  --resume`` on a run dir rebuilt from it): the metrics keep every leg's rows and the curve spans them all.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import throughput  # noqa: E402  (the benchmarks folder's own helpers)
from doc_blocks import existing_file, markdown_table, report_line, write_blocks  # noqa: E402

import distrl  # noqa: E402
from distrl.bench import ceiling, machine  # noqa: E402
from distrl.core.types import allocate  # noqa: E402
from distrl.models.device import WeightsToHost  # noqa: E402
from distrl.plotting import plot_curves, read_curve  # noqa: E402
from distrl.runtime.backends.batching import concatenate  # noqa: E402
from distrl.runtime.compute import setup_compute  # noqa: E402

ENV = "ALE/Pong-v5"
PONG = dict(throughput.PRESETS[ENV])  # 8 envs x 20 steps per unroll, reward clip 1, entropy 0.01, lr 6e-4


def compile_modules(modules) -> None:
    """``torch.compile`` each direct submodule in place (``Module.compile``: parameters and state-dict keys stay
    the same). Submodules, since learners call methods (``evaluate_unroll``), not the network's ``forward``.
    Measured on an H200 (docs): slower than eager for this learner, so it is no run setting."""
    for module in modules:
        for child in module.children():
            child.compile()


def pong_batch(batch_unrolls: int):
    """(program, config, one real Pong batch of ``batch_unrolls`` unrolls) for IMPALA's learner."""
    program, cfg = throughput._program(ENV, dict(PONG, batch_unrolls=batch_unrolls), 1)
    actor, spec = throughput._actor(program, 0)
    unrolls = [allocate(spec) for _ in range(batch_unrolls)]
    for u in unrolls:
        actor.unroll(u)
    return program, cfg, concatenate(spec, unrolls)


def learner_samples(device: str, precision: str, compile: bool, batch_unrolls: int, seconds: float,
                    threads: int = 1) -> dict:
    """Samples/s of IMPALA's learner stepping on one real Pong batch over and over (each step ends with
    the update's one device synchronisation, so the clock sees the GPU's work); ``threads``: torch's
    intra-op threads (a run's ``torch_threads``, 1 by default)."""
    setup_compute(threads)  # as a run's learner process
    program, cfg, batch = pong_batch(batch_unrolls)
    learner = program.make_learner({})
    if device != "cpu" or precision != "fp32":
        learner.place(torch.device(device), precision)
    if compile:
        compile_modules(list(learner.checkpoint_parts()[0].values()))
    t0 = time.perf_counter()
    for _ in range(3):  # warm-up: cuDNN's choice of kernels, or the compilation
        learner.step(batch)
    warm = time.perf_counter() - t0
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        learner.step(batch)
        n += 1
    per_step = cfg.unroll_length * cfg.num_envs * batch_unrolls
    return {"device": device, "threads": threads, "precision": precision, "compile": compile, "batch": per_step,
            "samples_per_s": n * per_step / (time.perf_counter() - t0), "updates": n, "warmup_s": warm}


def learner_loop(device: str, overlap: bool, batch_unrolls: int, seconds: float) -> dict:
    """Samples/s of the trainer's iteration around IMPALA's learner on ``device``, with its transfers overlapped
    with the updates or not (the same sequence as ``runtime/trainer.py``: ``_next_batch``, the update, the
    publish), over 4 distinct batches in turn so that every staging copies memory it has not seen just before;
    the published weights are copied into a host array, as the local weights service does."""
    program, cfg, first = pong_batch(batch_unrolls)
    batches = [first] + [{k: v.copy() for k, v in first.items()} for _ in range(3)]
    learner = program.make_learner({})
    learner.place(torch.device(device), "fp32")
    shared = learner.get_weights().copy()  # stands for the shared-memory weights buffer
    to_host = WeightsToHost(learner.device) if overlap else None
    pool = ThreadPoolExecutor(1) if overlap else None

    def update(i: int, ahead):
        if overlap:
            staged = ahead.result() if ahead is not None else learner.stage(batches[i % 4])
            ahead = pool.submit(learner.stage, batches[(i + 1) % 4])
            learner.step(staged)
            copied = to_host.ready(wait=True)
            if copied is not None:
                shared[:] = copied[0]
            to_host.start(learner.device_weights(), learner.version)
        else:
            learner.step(batches[i % 4])
            shared[:] = learner.get_weights()
        return ahead

    ahead = None
    for i in range(3):  # warm-up
        ahead = update(i, ahead)
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        ahead = update(3 + n, ahead)
        n += 1
    elapsed = time.perf_counter() - t0
    if pool is not None:
        pool.shutdown()
    per_step = cfg.unroll_length * cfg.num_envs * batch_unrolls
    return {"device": device, "overlap": overlap, "batch": per_step, "samples_per_s": n * per_step / elapsed,
            "updates": n, "ms_per_update": 1000 * elapsed / n}


def end_to_end(system: str, settings: dict, actors: int, seconds: float, alone: float) -> dict:
    sps, s = throughput.end_to_end(ENV, settings, actors, "local", seconds, system=system)
    split, updates = s["time_split_s"], max(s["learner_updates"], 1)
    return {"system": system, "settings": settings, "actors": actors, "sps": sps, "frames_per_s": 4 * sps,
            "actors_alone_sps": alone, "ratio": sps / alone, "learner_wait_frac": s["learner_wait_frac"],
            "policy_lag_mean": s["policy_lag_mean"], "bottleneck": s["bottleneck"],
            "update_ms": 1000 * split["learn_s"] / updates, "publish_ms": 1000 * split["publish_s"] / updates}


def replay_run(settings: dict, actors: int, seconds: float) -> dict:
    with tempfile.TemporaryDirectory() as d:
        summary = distrl.train("apex-dqn", env=ENV, runtime="local", num_actors=actors, total_steps=10**9,
                               max_wall_s=seconds, log_interval_s=1.0, run_dir=str(Path(d) / "r"), **settings)
        sps, updates_per_s = throughput.steady_rates(Path(d) / "r", "learner_updates", 0.5)
    split = summary["time_split_s"]
    updates = max(summary["learner_updates"], 1)
    return {"system": "apex-dqn", "settings": settings, "actors": actors, "sps": sps,
            "updates_per_s": updates_per_s, "update_ms": 1000 * split["learn_s"] / updates,
            "learner_wait_frac": summary["learner_wait_frac"], "bottleneck": summary["bottleneck"]}


LEG_FILES = ("config.yaml", "metrics.csv")  # with the last checkpoint's files: what a leg hands to the next


def _rebuild_run(leg: Path, run: Path) -> int:
    """A run dir from a leg folder: its config and metrics, and its checkpoint under ``checkpoints/step-N/``;
    returns N, the env steps the leg ended at."""
    steps = json.loads((leg / "state.json").read_text())["counters"]["env_steps"]
    ckpt = run / "checkpoints" / f"step-{steps:012d}"
    ckpt.mkdir(parents=True)
    for f in leg.iterdir():
        shutil.copy(f, run / f.name if f.name in LEG_FILES else ckpt / f.name)
    return steps


def _export_leg(run: Path, leg: Path) -> None:
    from distrl.runtime.run.checkpoint import latest_checkpoint

    ckpt = latest_checkpoint(run / "checkpoints")
    if leg.exists():
        shutil.rmtree(leg)
    leg.mkdir(parents=True)
    for f in [run / name for name in LEG_FILES] + sorted(ckpt.iterdir()):
        shutil.copy(f, leg / f.name)


def pong_run(out: Path, actors: int, seconds: float, settings: dict, resume_from: Path | None = None) -> dict:
    run = Path(tempfile.mkdtemp()) / "pong_run"  # outside ``out``: only the curve, the metrics and the leg are kept
    resumed_from_steps = None if resume_from is None else _rebuild_run(resume_from, run)
    s = distrl.train("impala", env=ENV, runtime="local", num_actors=actors, total_steps=10**10, max_wall_s=seconds,
                     log_interval_s=5.0, checkpoint_interval_s=120.0, run_dir=str(run), force=resume_from is None,
                     resume=resume_from is not None, **settings)
    _export_leg(run, out / "pong_leg")
    points = read_curve(run)
    plot_curves([(f"IMPALA, CUDA learner, {actors} actors", points)], out / "pong_curve.png")
    best = max((p[2] for p in points if p[2] == p[2]), default=None)
    return {"settings": settings, "actors": actors, "seconds": seconds, "env_steps": s["env_steps"],
            "frames": 4 * s["env_steps"], "sps": s["sps"], "return_last": s["episode_return_mean"], "return_best": best,
            "bottleneck": s["bottleneck"], "resumed_from_steps": resumed_from_steps}


class Results:
    def __init__(self, out: Path):
        self.out, self.data = out, {"machine": machine.describe(), "learner": [], "loop": [], "e2e": [], "replay": [],
                                    "pong": None, "errors": []}

    def save(self) -> None:
        (self.out / "gpu.json").write_text(json.dumps(self.data, indent=1, default=str))
        (self.out / "gpu.md").write_text(markdown(self.data))


def _overlap(settings: dict) -> str | None:
    """The run's overlap setting if it set one (``overlap`` in reports from before it was ``overlap_transfers``)."""
    return settings.get("overlap_transfers", settings.get("overlap"))


def _e2e_where(r: dict, rows: list[dict]) -> str:
    """An e2e row's learner column: its device, its inference device, and its overlap where any row set one."""
    settings = r["settings"]
    where = settings.get("device", "cpu")
    where += f", inference {settings['inference_device']}" if "inference_device" in settings else ""
    if _overlap(settings):
        return where + f", overlap {_overlap(settings)}"
    return where + (", overlap default" if any(_overlap(other["settings"]) for other in rows) else "")


def part_tables(d: dict) -> dict[str, str]:
    """One markdown table per part that has rows (a part not run has none). Reports written before a column
    existed (the e2e part's update and publish times) render without it."""
    tables = {}
    if d["learner"]:
        tables["learner"] = markdown_table(
            ["learner", "precision", "torch.compile", "batch", "samples/s", "warm-up s"],
            [(f"cpu, {r['threads']} thread{'s' if r['threads'] > 1 else ''}" if r["device"] == "cpu" else r["device"],
              r["precision"], "yes" if r["compile"] else "no", r["batch"], f"{r['samples_per_s']:,.0f}",
              f"{r['warmup_s']:.1f}") for r in d["learner"]])
    if d.get("loop"):
        tables["loop"] = markdown_table(
            ["learner", "overlap", "batch", "samples/s", "ms per update"],
            [(r["device"], "on" if r["overlap"] else "off", r["batch"], f"{r['samples_per_s']:,.0f}",
              f"{r['ms_per_update']:.2f}") for r in d["loop"]])
    if d["e2e"]:
        timed = all("update_ms" in r for r in d["e2e"])
        tables["e2e"] = markdown_table(
            ["system", "learner", "actors", "env steps/s", "frames/s", "actors alone steps/s", "ratio", "learner wait",
             "policy lag"] + ["ms per update", "ms per publish"] * timed + ["bottleneck"],
            [(r["system"], _e2e_where(r, d["e2e"]), r["actors"], f"{r['sps']:,.0f}", f"{r['frames_per_s']:,.0f}",
              f"{r['actors_alone_sps']:,.0f}", f"{r['ratio']:.2f}", f"{r['learner_wait_frac']:.2f}",
              f"{r['policy_lag_mean']:.1f}", *((f"{r['update_ms']:.2f}", f"{r['publish_ms']:.2f}") if timed else ()),
              r["bottleneck"]) for r in d["e2e"]])
    if d.get("replay"):
        tables["replay"] = markdown_table(
            ["system", "learner", "overlap", "actors", "env steps/s", "learner updates/s", "ms per update",
             "learner wait", "bottleneck"],
            [(r["system"], r["settings"].get("device", "cpu"), _overlap(r["settings"]), r["actors"], f"{r['sps']:,.0f}",
              f"{r['updates_per_s']:,.1f}", f"{r['update_ms']:.2f}", f"{r['learner_wait_frac']:.2f}", r["bottleneck"])
             for r in d["replay"]])
    return tables


def markdown(d: dict) -> str:
    """The report: the machine, one table per part that has rows, the Pong run's line and any errors."""
    lines = [f"Machine: {machine.one_line(d['machine'])}"]
    for table in part_tables(d).values():
        lines += ["", table]
    if d["pong"]:
        p = d["pong"]
        lines += [
            "",
            f"Pong run: {p['seconds']:.0f} s, {p['actors']} actors, {p['env_steps']:,} env steps "
            f"({p['frames']:,} frames), {p['sps']:,.0f} steps/s; return (100-episode mean) last "
            f"{p['return_last']}, best {p['return_best']}"
            + (f"; resumed from {p['resumed_from_steps']:,} env steps" if p.get("resumed_from_steps") else ""),
        ]
    lines += [f"error: {e}" for e in d["errors"]]
    return "\n".join(lines) + "\n"


def write_readme(reports: list[Path]) -> None:
    """The docs' GPU tables, rendered from the JSON reports device sessions brought back (this machine has no
    GPU to measure them again): block ``script:FOLDER-PART`` per part with rows, under a line naming the
    report and the machine and commit that measured it."""
    blocks = {}
    for path in reports:
        d = json.loads(path.read_text())
        notes = [f for f in (path.parent / "README.md", path.parent / "run.log") if f.exists()]
        logged = next((f for f in notes if "gpu_learners.py" in f.read_text()), None)
        how = f" (the command is in its folder's `{logged.name}`)" if logged else ""
        line = report_line(path, machine.one_line(d["machine"]), how)
        for part, table in part_tables(d).items():
            name = f"{path.parent.name}-{part}"
            if name in blocks:
                raise SystemExit(f"two reports in {path.parent} have a {part} table: give one of them alone")
            blocks[name] = f"{line}\n\n{table}"
    write_blocks({f"script:{name}": body for name, body in blocks.items()})
    print(f"wrote {', '.join(blocks)}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", default="gpu-out")
    p.add_argument("--parts", nargs="+", default=["learner", "loop", "e2e", "replay", "pong"],
                   choices=["learner", "loop", "e2e", "replay", "pong"])
    p.add_argument("--seconds", type=float, default=4.0, help="timed window of each learner row")
    p.add_argument("--e2e-seconds", type=float, default=25.0)
    p.add_argument("--pong-seconds", type=float, default=240.0)
    p.add_argument("--pong-batch-unrolls", type=int, default=4, help="unrolls per learner batch in the Pong run")
    p.add_argument("--pong-resume", type=Path, default=None,
                   help="continue the Pong run from a previous leg's folder (DIR/pong_leg of that run)")
    p.add_argument("--actors", type=int, default=max((os.cpu_count() or 2) - 1, 1))
    p.add_argument("--batch-unrolls", type=int, nargs="+", default=[1, 4])
    p.add_argument("--compile-batches", type=int, nargs="*", default=[4], help="batch_unrolls with torch.compile rows")
    p.add_argument("--cpu-rows", action=argparse.BooleanOptionalAction, default=True,
                   help="the learner part's CPU rows (--no-cpu-rows: CUDA rows only)")
    p.add_argument("--e2e-cpu", action=argparse.BooleanOptionalAction, default=True,
                   help="the e2e part's IMPALA run with a CPU learner (--no-e2e-cpu where it was measured before)")
    p.add_argument("--readme-from", type=existing_file, nargs="+", metavar="REPORT_JSON",
                   help="measure nothing: write the docs' GPU tables from these reports (doc_blocks.py)")
    args = p.parse_args()
    if args.readme_from:
        return write_readme(args.readme_from)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    res = Results(out)
    cuda = torch.cuda.is_available()

    def attempt(label, fn):
        try:
            return fn()
        except Exception as e:  # a benchmark keeps what it has and says what failed
            res.data["errors"].append(f"{label}: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
            print(f"{label} failed: {e!r}", flush=True)
        finally:
            res.save()

    if "learner" in args.parts:
        cores = os.cpu_count() or 1
        rows = [("cpu", "fp32", False, 1)] + ([("cpu", "fp32", False, cores)] if cores > 1 else [])
        rows = rows if args.cpu_rows or not cuda else []
        if cuda:
            rows += [("cuda", "fp32", False, 1), ("cuda", "bf16", False, 1)]
        for b in args.batch_unrolls:
            compiled = (
                [("cuda", "fp32", True, 1), ("cuda", "bf16", True, 1)] if cuda and b in args.compile_batches else []
            )
            for device, precision, comp, threads in rows + compiled:
                r = attempt(f"learner {device} {precision} compile={comp} B={b} threads={threads}",
                            partial(learner_samples, device, precision, comp, b, args.seconds, threads))
                if r:
                    res.data["learner"].append(r)
                    print(r, flush=True)
    big = dict(PONG, batch_unrolls=4)
    if "loop" in args.parts:
        for b in args.batch_unrolls:
            for overlap in (False, True):
                r = attempt(f"loop overlap={overlap} B={b}",
                            partial(learner_loop, "cuda" if cuda else "cpu", overlap, b, args.seconds))
                if r:
                    res.data["loop"].append(r)
                    print(r, flush=True)
    if "e2e" in args.parts:
        n = args.actors
        alone = attempt("impala actors alone", lambda: ceiling.actors_alone("impala", ENV, big, n, 8.0))
        seed_alone = attempt("seed actors alone", lambda: ceiling.actors_alone(
            "seed", ENV, dict(big, inference_device="cuda" if cuda else "cpu"), n, 8.0))
        runs = [("impala", dict(big))] if args.e2e_cpu or not cuda else []
        if cuda:  # overlap's default on a GPU is on: both, to measure it
            runs += [
                ("impala", dict(big, device="cuda", overlap_transfers="off")),
                ("impala", dict(big, device="cuda")),
            ]
        if cuda:
            runs.append(("seed", dict(big, device="cuda", inference_device="cuda")))
        for system, settings in runs:
            base = seed_alone if system == "seed" else alone
            if base:
                r = attempt(f"{system} {settings}", partial(end_to_end, system, settings, n, args.e2e_seconds, base))
                if r:
                    res.data["e2e"].append(r)
                    print(r, flush=True)
    if "replay" in args.parts:
        for overlap in ("off", "on"):
            settings = {"device": "cuda" if cuda else "cpu", "overlap_transfers": overlap}
            r = attempt(f"apex_dqn {settings}", partial(replay_run, settings, args.actors, args.e2e_seconds))
            if r:
                res.data["replay"].append(r)
                print(r, flush=True)
    if "pong" in args.parts:
        settings = dict(big, batch_unrolls=args.pong_batch_unrolls, device="cuda" if cuda else "cpu")
        res.data["pong"] = attempt("pong run", lambda: pong_run(out, args.actors, args.pong_seconds, settings,
                                                                args.pong_resume))
        if res.data["pong"] is None and cuda:  # a failure shows at the first update: the time left is the run's
            res.data["pong"] = attempt("pong run, overlap off", lambda: pong_run(
                out, args.actors, args.pong_seconds, dict(settings, overlap_transfers="off"), args.pong_resume))
    res.save()
    print(markdown(res.data), flush=True)


if __name__ == "__main__":
    main()
