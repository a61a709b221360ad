"""A learner's samples/s with the torsos' fused tanh layers (``models/tanh_mlp.py``) against torch's own layers, on
this machine's CPU: each system's default config, its learner stepping the same captured batches, the two kinds of
layers taking turns.

    python benchmarks/learner_layers.py --docs        # ppo, appo, impala, a2c, seed on CartPole; appo on LunarLander
    python benchmarks/learner_layers.py --cells appo:CartPole-v1 --reps 4

An inline run of the system collects ``--batches`` batches first (with the fused layers, the default), then the
learner steps through them ``--reps`` times with each kind of layers, alternating, so that a busy moment of the
machine hits both alike; the figure is the median. The weights move on as the learner steps (both kinds alike), as
they would in a run. Only the layers differ: the actors, the batches and the rest of the update are the same.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import distrl
from distrl.models import torsos

sys.path.insert(0, str(Path(__file__).resolve().parent))
from doc_blocks import Table, add_flag, start  # noqa: E402  (the benchmarks folder's own helper)

CELLS = ["ppo:CartPole-v1", "appo:CartPole-v1", "impala:CartPole-v1", "a2c:CartPole-v1", "seed:CartPole-v1",
         "appo:LunarLander-v3"]
FUSED = torsos.MLPTorso.forward
TORCHS = "torch's layers"


def torchs_layers(self, obs):
    return self.net(obs.flatten(1).float())


def cell(text: str) -> tuple[str, str]:
    """``SYSTEM:ENV`` as an argparse ``type``: a malformed or unknown one is argparse's one line and exit 2."""
    from distrl.agents.registry import get_system

    system, _, env = text.partition(":")
    try:
        get_system(system)
    except Exception:
        raise argparse.ArgumentTypeError(
            f"{text!r}: give SYSTEM:ENV with a system distrl has (e.g. appo:CartPole-v1)") from None
    if not env:
        raise argparse.ArgumentTypeError(f"{text!r}: give SYSTEM:ENV (e.g. appo:CartPole-v1)")
    return system, env


def rates(system: str, env: str, batches: int, reps: int) -> dict[str, float]:
    """Median learner samples/s over ``reps`` passes through the same batches, per kind of layers."""
    with tempfile.TemporaryDirectory() as tmp:
        trainer = distrl.make_trainer(system, env=env, runtime="inline", total_steps=10**12, max_wall_s=3600,
                                      log_interval_s=10**6, checkpoint_interval_s=10**6, run_dir=f"{tmp}/run")
        trainer.start()
        try:
            learner, captured, step = trainer.learner, [], trainer.learner.step
            learner.step = lambda batch: (captured.append({k: v.copy() for k, v in batch.items()}), step(batch))[1]
            trainer.step(updates=batches)
            learner.step = step
            samples = sum(b["rewards"].size for b in captured)
            runs = {TORCHS: [], "fused": []}
            for rep in range(reps):
                kinds = [(TORCHS, torchs_layers), ("fused", FUSED)]
                for name, forward in kinds if rep % 2 == 0 else kinds[::-1]:
                    torsos.MLPTorso.forward = forward
                    t0 = time.perf_counter()
                    for batch in captured:
                        learner.step(batch)
                    runs[name].append(samples / (time.perf_counter() - t0))
        finally:
            torsos.MLPTorso.forward = FUSED
            trainer.close()
    return {name: statistics.median(r) for name, r in runs.items()}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cells", nargs="+", type=cell, default=[cell(c) for c in CELLS], help="SYSTEM:ENV")
    p.add_argument("--batches", type=int, default=2, help="batches captured per cell")
    p.add_argument("--reps", type=int, default=10, help="passes through them with each kind of layers")
    add_flag(p)
    args = p.parse_args()
    writer = start(["learner-layers"], p, args, keep=("cells", "batches", "reps"))
    table = Table("system", "env", f"{TORCHS} (samples/s)", "fused (samples/s)", "fused / torch's")
    for system, env in args.cells:
        r = rates(system, env, args.batches, args.reps)
        table.row(system, env, f"{r[TORCHS]:,.0f}", f"{r['fused']:,.0f}", f"{r['fused'] / r[TORCHS]:.2f}")
    if writer:
        writer.write({"learner-layers": str(table)})

if __name__ == "__main__":
    main()
