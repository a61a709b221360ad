"""The best evaluated policy of a run: the weights the periodic evaluator scored highest, kept beside the checkpoints.

A value-based agent's greedy policy can move by hundreds of return within a few thousand updates (on the masked
CartPole R2D2's newest weights scored 154 to 500 between evaluations 25k env steps apart long after its training mean
levelled off: docs/systems/r2d2.md), so the last checkpoint is a draw among good and
bad policies. Keeping the weights of the best periodic evaluation is what Stable-Baselines3's ``EvalCallback``
(``best_model``) and Ray Tune's scored checkpoints offer as an option. The choice is a maximum over many evaluations
on the evaluator's own episodes (fixed seeds, see ``agents/common/evaluator.py``), so its own score is biased upwards;
``distrl eval`` plays other seeds, and its figure is the one to report.

``best/`` holds ``policy-<version>-<env steps>.safetensors`` (the acting model's parameters, flat, as the weights
service sends them) and ``best.json`` (the score, its spread, the episodes, the weights' version and file, the
trainer's env steps when the evaluation's report arrived: the weights were pulled a little earlier, and ``version``
names them exactly).
A new best's weights are written first, under a name of their own; then ``best.json`` is replaced in one rename; then
the old weights go. A process that dies at any point leaves a ``best.json`` that names whole weights (nothing is
fsynced: a power cut may lose the newest files, as for checkpoints). Ties go to the later weights
(more training behind the same score). A changed ``eval_episodes`` (a resume with other settings) starts the bar anew:
scores over different episodes do not compare.

A resume plays the kept weights again before the run goes on (``BestPolicyKeeper``) and the record takes the score
measured: the bar a later evaluation must meet is never a number read from a file (a damaged or forged score of 1e308
would otherwise freeze ``best/`` for good).
"""

from __future__ import annotations

import json
import math
import os
import sys
from pathlib import Path
from typing import Any

import numpy as np
import torch
from safetensors.torch import load_file, save_file

from distrl.runtime.backends.placement import component_seed
from distrl.runtime.run.observers import Observer

FOLDER = "best"


def read_best(run_dir: str | Path) -> dict[str, Any] | None:
    """``best.json`` of the run's best policy, or ``None`` where it kept none (or its record is not whole: unreadable
    JSON, no score, its weights file missing or empty). Reads only; loading the weights may still fail."""
    folder = Path(run_dir) / FOLDER
    try:
        meta = json.loads((folder / "best.json").read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(meta, dict) or not isinstance(meta.get("eval_return_mean"), (int, float)) \
            or not math.isfinite(meta["eval_return_mean"]) \
            or not isinstance(meta.get("weights"), str) or Path(meta["weights"]).name != meta["weights"]:
        return None
    weights = folder / meta["weights"]
    return meta if weights.is_file() and weights.stat().st_size > 0 else None


def headline(meta: dict[str, Any]) -> dict[str, Any]:
    """What a run's summary and ``distrl eval`` report of the kept best: its score, episodes and env steps (and,
    after a resume, whether its score was measured again: ``rescored``)."""
    keys = ("eval_return_mean", "eval_episodes", "env_steps") + (("rescored",) if "rescored" in meta else ())
    return {k: meta.get(k) for k in keys}


def load_best_weights(run_dir: str | Path, meta: dict[str, Any]) -> np.ndarray:
    """The best policy's flat parameters, from the file ``meta`` (``read_best``'s) names: float32 and finite, as the
    weights service writes them (anything else was not written by a run: ValueError, never cast or played)."""
    flat = load_file(str(Path(run_dir) / FOLDER / meta["weights"]))["flat"].numpy()
    if flat.dtype != np.float32:
        raise ValueError(f"the weights are {flat.dtype}, not float32")
    if not np.isfinite(flat).all():
        raise ValueError("the weights hold NaN or inf")
    return flat


def _loads(run_dir: Path, meta: dict[str, Any] | None) -> bool:
    try:
        return meta is not None and bool(np.isfinite(load_best_weights(run_dir, meta)).all())
    except Exception:  # truncated or foreign files: as if none were kept
        return False


class BestPolicy:
    """Keeps ``run_dir/best`` up to date with the evaluations a run reports; knows the score to beat across a resume
    (a kept record whose weights do not load counts as none)."""

    def __init__(self, run_dir: str | Path):
        self.run_dir = Path(run_dir)
        kept = read_best(self.run_dir)
        kept = kept if _loads(self.run_dir, kept) else None
        self.score = float(kept["eval_return_mean"]) if kept else -math.inf
        self.episodes = kept.get("eval_episodes") if kept else None
        self.weights = kept["weights"] if kept else None

    def offer(self, weights: np.ndarray, score: float, meta: dict[str, Any]) -> bool:
        """Keep ``weights`` if ``score`` is at least the best so far over the same number of episodes (and finite);
        True when kept."""
        weights = np.array(weights, dtype=np.float32, copy=True)  # Ray's object store hands out read-only arrays
        comparable = self.episodes is None or meta.get("eval_episodes", self.episodes) == self.episodes
        if not math.isfinite(score) or (comparable and score < self.score) or not np.isfinite(weights).all():
            return False
        folder = self.run_dir / FOLDER
        folder.mkdir(parents=True, exist_ok=True)
        # a name of its own: after a crash and resume, versions repeat with other weights
        name = f"policy-{meta.get('version', 0)}-{meta.get('env_steps', 0)}.safetensors"
        if name == self.weights:
            name = name.replace(".safetensors", "-again.safetensors")
        tmp = folder / f".tmp-{os.getpid()}-{name}"
        save_file({"flat": torch.from_numpy(weights)}, str(tmp))
        os.replace(tmp, folder / name)
        record = folder / ".tmp-best.json"
        record.write_text(json.dumps({"eval_return_mean": float(score), **meta, "weights": name}, indent=1))
        os.replace(record, folder / "best.json")  # the one step that switches to the new best
        for old in folder.glob("*.safetensors"):  # the previous best's, and what a crash left half written
            if old.name != name:
                old.unlink(missing_ok=True)
        self.score, self.episodes, self.weights = float(score), meta.get("eval_episodes"), name
        return True

    def rescore(self, scores: dict) -> None:
        """The kept weights' record takes ``scores`` (``PolicyScorer.score``'s, measured on resume, with
        ``rescored``: True), or only ``rescored``: False where they could not be played (the score it says then is
        not trusted: the summary and ``distrl eval`` say so)."""
        record = {**read_best(self.run_dir), **scores}
        tmp = self.run_dir / FOLDER / ".tmp-best.json"
        tmp.write_text(json.dumps(record, indent=1))
        os.replace(tmp, self.run_dir / FOLDER / "best.json")
        if "eval_return_mean" in scores:
            self.score, self.episodes = float(scores["eval_return_mean"]), scores.get("eval_episodes")


class BestPolicyKeeper(Observer):
    """A trainer's keeper of ``run_dir/best``: offers each evaluation's weights, re-scores the kept ones on resume
    (with a component of the program's ``scores_weights`` role, built in the trainer's process), and names the kept
    best in the summary."""

    def __init__(self, run_dir: Path):
        self.run_dir = run_dir
        self.best: BestPolicy | None = None  # opened when an evaluator first offers weights, or on resume

    def on_start(self, trainer) -> None:
        roles = [(position, r) for position, r in enumerate(trainer.program.roles) if r.scores_weights]
        if not trainer.resume or not roles or read_best(self.run_dir) is None:
            return
        self.best = BestPolicy(self.run_dir)
        if self.best.weights is None:  # the kept weights do not load: none is kept
            return
        position, role = roles[0]
        scorer = None
        try:  # the evaluator's own seed (its first component's), so it plays the episodes evaluations play
            scorer = role.make(0, component_seed(trainer.cfg.seed, position, 0), {name: None for name in role.uses})
            scores = scorer.score(load_best_weights(self.run_dir, read_best(self.run_dir)))
            if not math.isfinite(scores["eval_return_mean"]):
                raise ValueError(f"a score of {scores['eval_return_mean']}")
        except Exception as e:  # an env this process cannot make, weights of another model: the next evaluation's
            print(f"distrl: the kept best policy could not be played again ({type(e).__name__}: {e}); its score "
                  "is not trusted and the next evaluation replaces it", file=sys.stderr, flush=True)
            self.best.score, self.best.episodes = -math.inf, None
            self.best.rescore({"rescored": False})
            return
        finally:
            if scorer is not None:
                scorer.close()
        self.best.rescore({**scores, "rescored": True})

    def on_report(self, trainer, info: dict) -> None:
        if "policy" not in info:  # an evaluation's weights come with a score at least the evaluator's best
            return
        if self.best is None:
            self.best = BestPolicy(self.run_dir)
        offered, scores = info["policy"], info["metrics"]
        # env steps when the report arrived (the weights were pulled a little earlier; their version names them)
        meta = {"eval_return_std": scores["eval_return_std"], "eval_episodes": offered["eval_episodes"],
                "version": offered["version"], "env_steps": trainer.env_steps}
        self.best.offer(offered["weights"], scores["eval_return_mean"], meta)

    def on_close(self, trainer, summary: dict | None) -> None:
        kept = read_best(self.run_dir) if summary is not None else None
        if kept is not None:  # what distrl eval plays: the best periodic evaluation's weights
            summary["best_policy"] = headline(kept)
