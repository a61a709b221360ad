"""PPO's passes over a batch (Schulman et al. 2017, section 5), shared by PPO's and APPO's learners (SEED's with
``learner=appo``) and A3C's opt-in passes: the targets and advantages are taken once, from the weights at the batch's
start; then ``epochs`` passes each draw minibatches of single steps at random from the whole batch, each minibatch an
update
(and a weights version), so no minibatch is one env's run of correlated steps."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np
import torch

from distrl.agents.common.gradient_learner import GradientLearner
from distrl.agents.common.normalising import track_statistics
from distrl.agents.common.settings import minibatch_count
from distrl.errors import ConfigError


def check_minibatches(cfg, streams: int, streams_are: str, length: str = "unroll_length") -> None:
    """A minibatch is whole env streams of a batch (IMPALA's ``minibatch_by=stream``:
    ``learner_inputs.env_stream_slices``) or single steps: at least one of them each. ``streams``: the env streams
    in a batch, which the settings named by ``streams_are`` make (for the message); ``length``: the setting that
    gives each stream's steps."""
    if getattr(cfg, "minibatch_by", "step") == "step":
        most, unit = streams * getattr(cfg, length), f"steps in a batch ({streams_are} * {length})"
    else:
        most, unit = streams, f"env streams in a batch ({streams_are})"
    if cfg.minibatches > most:
        raise ConfigError(f"minibatches {cfg.minibatches} exceeds the {unit}, {most}: give at most {most}")


def flat_steps(b: dict[str, torch.Tensor], valid: torch.Tensor, **per_step: torch.Tensor) -> dict[str, torch.Tensor]:
    """A time-major batch ``[T(+1), B, ...]`` as ``T * B`` single steps: its observations (the bootstrap one left
    out), actions and valid mask, and each of ``per_step`` (``[T, B]``, e.g. the targets taken at the batch's
    start)."""
    n = valid.numel()
    return {"obs": b["obs"][:-1].reshape((n,) + b["obs"].shape[2:]),
            "actions": b["actions"].reshape((n,) + b["actions"].shape[2:]), "valid": valid.reshape(-1),
            **{k: v.reshape(-1) for k, v in per_step.items()}}


def step_minibatches(steps: dict[str, torch.Tensor], cfg) -> Iterator[dict[str, torch.Tensor]]:
    """``cfg.epochs`` passes over ``steps`` (``flat_steps``), each shuffled and cut into ``minibatch_count``
    minibatches of single steps, in the order they are to be learned from (PPO's and APPO's learners, A3C's
    workers)."""
    n = steps["valid"].shape[0]
    cuts = np.linspace(0, n, minibatch_count(cfg, n) + 1).round().astype(int)
    for _ in range(cfg.epochs):
        order = torch.randperm(n, device=steps["valid"].device)
        shuffled = {k: v[order] for k, v in steps.items()}  # one gather per pass; the minibatches are views
        for lo, hi in zip(cuts[:-1], cuts[1:]):
            yield {k: v[lo:hi] for k, v in shuffled.items()}


class PassesLearner(GradientLearner):
    """A gradient learner that can make several updates per batch. A batch counts as one update for the non-finite
    bookkeeping, as a single-update batch does: one with a NaN or inf anywhere is skipped whole (checked over every
    rank's shard, so data-parallel ranks agree), and a batch with any update skipped for divergence adds one to
    ``nonfinite`` (the trainer stops a run on a streak of them). The normalisers' statistics move once, after the
    passes (``after_passes``), so every update of the batch uses the statistics the actors acted with."""

    def nonfinite_batch(self, b: dict[str, torch.Tensor]) -> dict[str, float] | None:
        """What to report if ``b`` holds a NaN or inf anywhere (the batch skipped), else None."""
        floats = [t for t in b.values() if t.is_floating_point()]
        bad = self.reduce_sums(torch.stack([(~torch.isfinite(t)).sum() for t in floats]).sum().float().reshape(1))
        if bad.item() > 0:
            self.nonfinite += 1
            return {"nonfinite_skipped": float(self.nonfinite), "lr": self.hyper["lr"]}
        return None

    def guarded_passes(self, b: dict[str, torch.Tensor], passes: Callable[[], tuple[list[dict], torch.Tensor]]) -> dict:
        """Run ``passes()`` over the time-major batch ``b`` unless it holds a NaN or inf (then skipped whole); it
        returns what each update applied and the value targets (``[T, B]``) the statistics then move toward."""
        skipped = self.nonfinite_batch(b)
        if skipped:
            return skipped
        before = self.nonfinite
        applied, value_targets = passes()
        return self.after_passes(b, before, applied, value_targets)

    def ppo_passes(self, b: dict[str, torch.Tensor], targets: Callable, update: Callable[[dict], dict]) -> dict:
        """PPO's passes over ``b`` (``guarded_passes``): ``targets(b)``, run without gradients from the weights at the
        batch's start, gives the single steps to draw minibatches from (``flat_steps``) and the value targets;
        ``update`` makes one update on a minibatch."""
        def passes():
            with torch.no_grad():
                steps, value_targets = targets(b)
            return self.step_passes(steps, update), value_targets

        return self.guarded_passes(b, passes)

    def step_passes(self, steps: dict[str, torch.Tensor], update: Callable[[dict], dict]) -> list[dict[str, float]]:
        """``epochs`` passes over ``steps`` (``flat_steps``), each shuffled and cut into ``minibatch_count``
        minibatches; ``update`` makes one update on a minibatch. What each update applied, in order."""
        return [update(mb) for mb in step_minibatches(steps, self.cfg)]

    def after_passes(self, b: dict[str, torch.Tensor], before: int, applied: list[dict[str, float]],
                     targets: torch.Tensor) -> dict[str, float]:
        """What a batch of several updates reports (the last applied update's terms; one more non-finite skip if any
        update of the batch was skipped, ``before`` being the count at its start), and the statistics' one move: the
        whole batch, with ``targets`` (its value targets, ``[T, B]``), if any update applied. The batch's data is
        finite (checked before the passes), so a skipped update was the model's divergence, not a reason to leave
        its steps out."""
        self.nonfinite = before + int(self.nonfinite > before)
        kept = [a for a in applied if "grad_norm" in a]
        out = {**(kept[-1] if kept else applied[-1]), "nonfinite_skipped": float(self.nonfinite)}
        return track_statistics(self.model, b["obs"], targets, b["valid"].float(), out, self.reduce_sums)
