"""SEED RL against IMPALA on the same machine, in one run: the survey's batch-versus-stream trade-off.

IMPALA actors run their own policy copy and send whole unrolls (one message per T steps); SEED actors
only step envs and make a round trip to the central inference server every step, which batches all
actors' observations into one forward pass. Small observations and a cheap network (CartPole) favour
IMPALA (SEED pays a round trip per step for a forward that costs little); large observations and a
CNN (Pong) are where central batched inference earns its keep, above all on an accelerator.

    python benchmarks/seed_vs_impala.py                      # CartPole + Pong on local, 8 s each
    python benchmarks/seed_vs_impala.py --envs CartPole-v1 --runtimes local ray --seconds 10
"""

from __future__ import annotations

import argparse
import os

from throughput import PRESETS, SEED_PRESETS, end_to_end


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--envs", nargs="+", default=list(PRESETS))
    p.add_argument("--runtimes", nargs="+", default=["local"])
    p.add_argument("--actors", type=int, default=os.cpu_count() or 2)
    p.add_argument("--seconds", type=float, default=8.0)
    p.add_argument("--set", dest="assignments", action="append", default=[], metavar="KEY=VALUE",
                   help="extra settings for both systems (e.g. num_envs=32)")
    args = p.parse_args()
    extra = dict(a.split("=", 1) for a in args.assignments)
    lines = ["| env | runtime | actors | IMPALA sps | SEED sps | SEED / IMPALA | SEED batch (obs, mean) | latency p50 "
             "/ p99 ms | "
             "SEED actor idle | SEED learner wait | IMPALA learner wait |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for env_id in args.envs:
        settings = {**PRESETS.get(env_id, {}), **extra}
        seed_settings = {**SEED_PRESETS.get(env_id, PRESETS.get(env_id, SEED_PRESETS["CartPole-v1"])), **extra}
        for runtime in args.runtimes:
            impala, si = end_to_end(env_id, settings, args.actors, runtime, args.seconds, system="impala")
            seed, ss = end_to_end(env_id, seed_settings, args.actors, runtime, args.seconds, system="seed")
            line = (f"| {env_id} | {runtime} | {args.actors} | {impala:,.0f} | {seed:,.0f} | {seed / impala:.2f} | "
                    f"{ss.get('inference_batch_mean') or 0:.0f} | {ss.get('latency_p50_ms') or 0:.2f} / "
                    f"{ss.get('latency_p99_ms') or 0:.2f} | {ss.get('actor_idle_frac')} | {ss['learner_wait_frac']} | "
                    f"{si['learner_wait_frac']} |")
            lines.append(line)
            print(line, flush=True)
    print("\n" + "\n".join(lines))


if __name__ == "__main__":
    main()
