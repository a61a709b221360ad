"""SEED's inference server on a GPU: the cuda policy acts like the cpu one, and what it saves.

Runs SEED on Pong twice, with the inference server's policy on ``cuda`` and on the CPU, and prints
inference seconds, round-trip latency and env steps/s for each (the learner stays on the CPU).

    python benchmarks/seed_gpu_check.py 40          # seconds per run; needs a GPU and the atari extra
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

import distrl
from distrl.agents.seed.builder import _policy
from distrl.agents.seed.config import SeedConfig
from distrl.config import load_yaml
from distrl.envs import env_spec
from distrl.presets import preset_path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from doc_blocks import finished  # noqa: E402  (the benchmarks folder's own helper)

# over SEED's vtrace preset: an inference check, not a learner one
SETTINGS = dict(
    load_yaml(preset_path("seed", "vtrace")), num_actors=12, num_envs=8, unroll_length=20, entropy_coef=0.01, lr=6e-4
)


def main() -> None:
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 40.0
    print("cuda:", torch.cuda.get_device_name(0), flush=True)
    env = env_spec("ALE/Pong-v5")
    cpu, gpu = _policy(env, SeedConfig()), _policy(env, SeedConfig(inference_device="cuda"))
    gpu.set_weights(torch.nn.utils.parameters_to_vector(cpu.model.parameters()).detach().numpy(), 1)
    obs = np.random.default_rng(0).integers(0, 255, (32,) + env.obs_shape, dtype=np.uint8)
    with torch.no_grad():
        a = cpu.model.greedy(torch.from_numpy(obs)).numpy()
        b = gpu.model.greedy(torch.from_numpy(obs).cuda()).cpu().numpy()
    print("greedy actions equal on cpu and cuda:", bool((a == b).all()), flush=True)
    keys = ("sps", "inference_batch_mean", "latency_p50_ms", "latency_p99_ms", "actor_idle_frac", "learner_wait_frac",
            "bottleneck", "inference_s")
    for device in ("cuda", "cpu"):
        t = time.time()
        s = finished(distrl.train("seed", env="ALE/Pong-v5", runtime="local", total_steps=10**9, max_wall_s=seconds,
                         run_dir=tempfile.mkdtemp() + "/r", inference_device=device, **SETTINGS))
        print(device, {k: s.get(k) for k in keys}, f"total {time.time() - t:.1f}s", flush=True)


if __name__ == "__main__":
    main()
