"""What a learner needs to run on the run's device (``models/device.py``), and beside other learners: its
networks moved there, its batches staged there, and a hook between its backward pass and its optimizer
step where data-parallel learners combine their gradients (``runtime/learners.py``). The trainer calls
``place`` once, before a resumed checkpoint loads."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import torch

from distrl.models.device import Staged, Staging, mixed_precision


class OnDevice:
    device = torch.device("cpu")
    _staging: Staging | None = None

    def place(self, device: torch.device, precision: str = "fp32") -> None:
        """Move every network the learner checkpoints (its parameter objects stay the same, so optimizers built
        on them keep working) and rebind a flat weights buffer there; ``bf16``: their layers under autocast."""
        modules = list(self.checkpoint_parts()[0].values())
        for module in modules:
            module.to(device)
        flat = getattr(self, "flat", None)
        if flat is not None:
            flat.to(device)
        self.device = torch.device(device)
        self._staging = Staging(self.device)
        if precision == "bf16":
            mixed_precision(modules, self.device)

    reducer = None  # several learners: what combines their gradients and statistics (``combine_over``)

    def combine_over(self, reducer) -> None:
        """From now on combine with the other data-parallel learners through ``reducer`` (its ``gradients(loss,
        params)`` averages the gradients and the loss over the ranks, its ``sums(s)`` sums statistics)."""
        self.reducer = reducer

    def reduce_gradients(self, loss: torch.Tensor, params) -> torch.Tensor:
        """Called after ``loss.backward()``: one learner has nothing to combine; data-parallel learners average the
        gradients and the loss over the ranks (so every rank clips, checks and steps the same values)."""
        return loss if self.reducer is None else self.reducer.gradients(loss, params)

    def reduce_sums(self, sums: torch.Tensor) -> torch.Tensor:
        """Statistics a learner gathers from its batch (a normaliser's moments): one learner's are the total;
        data-parallel learners sum them over the ranks, so every rank updates them alike."""
        return sums if self.reducer is None else self.reducer.sums(sums)

    def batch_tensors(self, arrays: Mapping[str, np.ndarray] | Staged) -> dict[str, torch.Tensor]:
        """A batch's arrays as tensors on the learner's device (zero-copy on the CPU, pinned and non-blocking on a
        GPU); a batch ``stage`` already sent there is used as it is."""
        return self._stager().tensors(arrays)

    def stage(self, arrays: Mapping[str, np.ndarray]) -> Staged:
        """Send the next batch to the device while the current update runs (another thread; the trainer's
        ``prefetch``); ``step`` takes the result in place of the arrays."""
        return self._stager().stage(arrays)

    def prefetch(self, on: bool) -> None:
        """The trainer's ``overlap_transfers`` where the learner draws its own batches (replay learners override
        this); a learner handed its batches is sent the next one by the trainer instead."""

    def _stager(self) -> Staging:
        if self._staging is None:
            self._staging = Staging(self.device)
        return self._staging

    def device_weights(self) -> torch.Tensor:
        """What ``get_weights`` returns, as one flat float32 tensor still on the learner's device: where a
        publish from a GPU starts without waiting for it (``models/device.WeightsToHost``)."""
        raise NotImplementedError

    def get_weights(self) -> np.ndarray:
        """The flat weights the actors load, as a new host array (``device_weights`` here is a new tensor; learners
        that keep a live flat buffer return a copy of it instead)."""
        return self.device_weights().detach().cpu().numpy()
