"""Settings every run has, whatever the system: environment, budget, seed, where and how it runs."""

from __future__ import annotations

from dataclasses import dataclass

from distrl.config import setting
from distrl.core.program import (
    RUNTIMES,  # registered once, with the backends (runtime/backends)
)


@dataclass(frozen=True)
class RunConfig:
    env: str = setting(
        "CartPole-v1", "Gymnasium env id (also 'module:EnvId' for your own env, 'ALE/...' for Atari).", cli=True
    )
    total_steps: int | None = setting(
        None,
        "Environment steps to train for (summed over all envs and actors); "
        "default: the system's budget that solves CartPole.",
        low=1,
        high=10**13,
        cli=True,
    )
    seed: int = setting(0, "Random seed for envs, exploration and weights.", low=0, high=2**32 - 1, cli=True)
    runtime: str | None = setting(
        None,
        "Where components run: inline (one process), local (processes + shared memory) "
        "or ray; default local where the system supports it, else inline.",
        choices=RUNTIMES,
        cli=True,
    )
    run_dir: str | None = setting(None, "Run directory; default runs/<system>-<env>-<time>.", cli=True)
    log_interval_s: float = setting(
        1.0, "Seconds between metrics rows (CSV, TensorBoard, progress).", low=0.0, low_open=True
    )
    checkpoint_interval_s: float = setting(
        30.0, "Seconds between checkpoints (one is always written at the end).", low=0.0, low_open=True
    )
    keep_checkpoints: int = setting(3, "How many recent checkpoints to keep on disk.", low=1)
    torch_threads: int = setting(
        1, "torch intra-op threads per process (1 is fastest for small nets on few cores).", low=1
    )
    device: str = setting("cpu", "Where the learner computes: cpu, cuda, cuda:N, or auto (the GPU where torch sees "
                                 "one). A3C and GORILA learn in their CPU workers and ES combines returns on the CPU: "
                                 "those keep cpu. SEED's inference server has its own inference_device.")
    precision: str = setting(
        "fp32",
        "The learner's arithmetic: fp32, or bf16 (autocast: matrix products and "
        "convolutions in bfloat16; weights and optimizer state stay float32), or auto: bf16 for a central learner on "
        "a CPU with bfloat16 arithmetic (AVX512-BF16 or AMX), else fp32 (config.yaml records which). bf16 pays for "
        "convolutions on such a CPU (Atari), not for small MLPs, and was no faster on an H200.",
        choices=("fp32", "bf16", "auto"),
    )
    overlap_transfers: str = setting(
        "auto",
        "Overlap the learner's transfers with its updates: the next consumed "
        "batch is staged on the device by a thread while the current update runs, "
        "and weights leave the device without the learner waiting for its last "
        "step (published one update later). auto: on where the learner is on a "
        "GPU and the runtime is local or ray. on: also replay learners draw and "
        "stage their next sample on a thread (not yet measured on a GPU).",
        choices=("auto", "on", "off"),
    )
    num_learners: int = setting(1, "Data-parallel learners (local: processes; ray: actors, one GPU each with "
                                   "device=cuda): each takes its own batch of the program's size and they average "
                                   "their gradients every update (torch.distributed: gloo on CPUs, NCCL with "
                                   "device=cuda, one GPU each).", low=1, high=64)
    ray_address: str | None = setting(None, "Ray cluster to join (HOST:PORT); default RAY_ADDRESS or a new local "
                                            "instance.")
    max_wall_s: float | None = setting(
        None, "Stop after this many seconds even if total_steps is not reached.", low=0.0, low_open=True
    )
    eval_interval_steps: int | None = setting(None, "Env steps between periodic greedy evaluations on their own env "
                                                    "copies, and one of the final weights at the end of the budget "
                                                    "(eval_return_mean in metrics.csv and TensorBoard; the best "
                                                    "one's weights are kept in run_dir/best, which distrl eval plays); "
                                                    "0: none; default: the system's (none, except R2D2 and SEED + "
                                                    "R2D2: 25000).", low=0)
    eval_episodes: int | None = setting(None, "Episodes per periodic evaluation (played at once on their own env "
                                              "copies); default: the system's (5; R2D2 and SEED + R2D2: 10).", low=1)
    step_timeout_s: float = setting(300.0, "A component whose step takes longer than this (stopped, deadlocked, a hung "
                                           "env) is reported and restarted.", low=0.0, low_open=True)
    tracker: str = setting(
        "none",
        "An experiment tracker that receives the metrics rows, the settings, the summary "
        "and the curves beside the run dir: wandb (offline unless WANDB_MODE says "
        "otherwise) or mlflow (a file store in the run dir unless tracker_uri names a "
        "server); pip install 'distrl[wandb]' or 'distrl[mlflow]'.",
        choices=("none", "wandb", "mlflow"),
    )
    tracker_project: str | None = setting(None, "The tracker's project (W&B) or experiment (MLflow); default distrl.")
    tracker_uri: str | None = setting(None, "MLflow's tracking URI (http://HOST:PORT, file:PATH, ...); default "
                                            "MLFLOW_TRACKING_URI, else RUN_DIR/mlruns.")
    autoscale: str = setting(
        "auto",
        "on: the run sizes itself while it goes on, adding or removing actors between min_actors and max_actors "
        "(starting from num_actors) from the measured learner wait, the actors' blocked time and env steps/s "
        "(local and ray; appo, impala, seed, apex-dqn). Each change is a row of autoscale.csv. auto: on for those "
        "systems and runtimes unless num_actors is given (a preset's or yours); off: the actors num_actors says.",
        choices=("auto", "on", "off"),
    )
    min_actors: int = setting(1, "The fewest actors an autoscaled run keeps.", low=1, high=4096)
    max_actors: int | None = setting(None, "The most actors an autoscaled run starts; default 4 per core of the "
                                           "machine that starts it (on a Ray cluster, give it), and on local no "
                                           "more than half the free shared memory (/dev/shm) holds the unroll slots "
                                           "of.", low=1, high=4096)
    max_restarts: int = setting(
        10,
        "Restarts of one component within 5 minutes before the run stops as a crash loop "
        "(counted per window: rare crashes in a long run are always restarted).",
        low=0,
        high=10_000,
    )
