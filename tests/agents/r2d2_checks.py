"""Checks shared by R2D2's and SEED + R2D2's tests."""

import copy
import dataclasses

import numpy as np

from distrl.replay import SampledBatch


def learner_priorities(cfg, model, replay, slots) -> np.ndarray:
    """The priorities R2D2's learner gives the stored sequences at ``slots`` on its first update, its target network
    a copy of ``model`` (then the actor's copy and the learner's agree: actor-side priorities are the learner's).
    ``model`` itself is left as it was (the learner's update moves a normaliser's statistics even at lr 0)."""
    from distrl.agents.r2d2.learner import R2D2Learner

    learner = R2D2Learner(dataclasses.replace(cfg, lr=0.0), copy.deepcopy(model), replay=None)
    batch = SampledBatch(replay.storage.read(slots), slots, np.full(len(slots), 0.5), np.ones(len(slots), np.float32))
    return learner.update(batch)[1]
