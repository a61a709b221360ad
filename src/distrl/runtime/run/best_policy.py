"""The best evaluated policy of a run: the weights the periodic evaluator scored highest, kept beside the checkpoints.

A value-based agent's greedy policy can move by hundreds of return within a few thousand updates (on the masked
CartPole R2D2's last weights scored 188 to 500 between evaluations 20k env steps apart:
``benchmarks/reports/r2d2-weight-averaging-2026-11-30/``), so the last checkpoint is a draw among good and bad
policies. Keeping the weights of the best periodic evaluation is the field's usual answer (Stable-Baselines3's
``EvalCallback`` saves ``best_model``; Ray Tune keeps checkpoints by a score). The choice is made on the evaluator's
own episodes (fixed seeds, see ``agents/common/evaluator.py``); ``distrl eval`` plays other seeds, so its figure is not
the one the choice was made on.

``best/`` holds ``policy.safetensors`` (the acting model's parameters, flat, as the weights service sends them) and
``best.json`` (the score, its spread, the episodes, the weights' version, the env steps). It is written to a
temporary folder and renamed into place, so a crash never leaves half of it. Ties go to the later weights (more
training behind the same score).
"""

from __future__ import annotations

import json
import math
import os
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import torch
from safetensors.torch import load_file, save_file

FOLDER = "best"


def read_best(run_dir: str | Path) -> dict[str, Any] | None:
    """``best.json`` of the run's best policy, or ``None`` where it kept none (or what it kept is damaged)."""
    folder = Path(run_dir) / FOLDER
    try:
        meta = json.loads((folder / "best.json").read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(meta, dict) or not isinstance(meta.get("eval_return_mean"), (int, float)):
        return None
    weights = folder / "policy.safetensors"
    return meta if weights.is_file() and weights.stat().st_size > 0 else None


def load_best_weights(run_dir: str | Path) -> np.ndarray:
    """The best policy's flat parameters (float32)."""
    return load_file(str(Path(run_dir) / FOLDER / "policy.safetensors"))["flat"].numpy()


class BestPolicy:
    """Keeps ``run_dir/best`` up to date with the evaluations a run reports; knows the score to beat across a resume."""

    def __init__(self, run_dir: str | Path):
        self.run_dir = Path(run_dir)
        kept = read_best(self.run_dir)
        self.score = float(kept["eval_return_mean"]) if kept else -math.inf

    def offer(self, weights: np.ndarray, score: float, meta: dict[str, Any]) -> bool:
        """Keep ``weights`` if ``score`` is at least the best so far (and finite); True when kept."""
        weights = np.asarray(weights, dtype=np.float32)
        if not math.isfinite(score) or score < self.score or not np.isfinite(weights).all():
            return False
        folder = self.run_dir / FOLDER
        tmp = self.run_dir / f".tmp-{FOLDER}-{os.getpid()}"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        save_file({"flat": torch.from_numpy(np.ascontiguousarray(weights))}, str(tmp / "policy.safetensors"))
        (tmp / "best.json").write_text(json.dumps({"eval_return_mean": float(score), **meta}, indent=1))
        old = self.run_dir / f".old-{FOLDER}-{os.getpid()}"
        if folder.exists():  # a rename cannot replace a folder: the old one steps aside, then goes
            os.replace(folder, old)
        os.replace(tmp, folder)
        shutil.rmtree(old, ignore_errors=True)
        self.score = float(score)
        return True
