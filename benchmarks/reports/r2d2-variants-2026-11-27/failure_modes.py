"""How R2D2's greedy policy fails on the masked CartPole: one 500k-step run, then 20 greedy episodes, each as
(length, what ended it: "x" the cart off the track, "th" the pole down, "-" the time limit, the final cart position).
The episodes are played by ``benchmarks/failure_modes.py`` (which also runs this for any system:
``--system r2d2 --steps 5e5 --seed SEED --set obs_norm=true``).

    python failure_modes.py SEED "{'obs_norm': True}"
"""

import ast
import sys
import tempfile
from pathlib import Path

import distrl

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # benchmarks/
from failure_modes import episodes  # noqa: E402

seed = int(sys.argv[1])
extra = ast.literal_eval(sys.argv[2]) if len(sys.argv) > 2 else {}
with tempfile.TemporaryDirectory() as d:
    distrl.train("r2d2", env="distrl/CartPoleNoVelocity-v1", seed=seed, total_steps=500_000, run_dir=d, **extra)
    result = episodes(d, "distrl/CartPoleNoVelocity-v1")
print(seed, extra, result, flush=True)
