"""Where gradient-sharing workers (A3C) find the parameters: one interface, two transports.

- :class:`SharedParams` (``local``): the model and optimizer statistics live in shared memory;
  ``push`` applies a gradient in place, lock-free (Hogwild).
- :class:`RemoteParams` (``ray``): a parameter-server actor holds them; ``push`` ships the gradient
  and the server applies it, ``pull`` fetches the latest weights. Machines share no memory, so
  this is the only way across a cluster.

Workers only call ``pull(model) -> version`` and ``push(model, version) -> version``.
"""

from __future__ import annotations

import numpy as np
import torch


class SharedParams:
    def __init__(self, model: torch.nn.Module, optimizer: torch.optim.Optimizer, counter: torch.Tensor):
        self.model, self.optimizer, self.counter = model, optimizer, counter

    def pull(self, local: torch.nn.Module) -> int:
        with torch.no_grad():
            for lp, sp in zip(local.parameters(), self.model.parameters()):
                lp.copy_(sp)
        return int(self.counter.item())

    def push(self, local: torch.nn.Module, version: int) -> int:
        for lp, sp in zip(local.parameters(), self.model.parameters()):
            sp.grad = lp.grad  # the shared optimizer reads this worker's gradient
        self.optimizer.step()
        self.counter += 1  # lock-free, like the update itself
        return int(self.counter.item())


class ParamServer:
    """The state behind :class:`RemoteParams`: a model and its optimizer, updated by gradients."""

    def __init__(self, make_learner):
        import torch as _torch

        _torch.set_num_threads(1)
        self.learner = make_learner()
        self.params = list(self.learner.model.parameters())
        self.version = 0

    def apply(self, grads: np.ndarray, version: int) -> int:
        offset = 0
        for p in self.params:
            n = p.numel()
            p.grad = torch.from_numpy(grads[offset:offset + n]).view_as(p).clone()
            offset += n
        self.learner.optimizer.step()
        self.version += 1
        return self.version

    def set_weights(self, flat: np.ndarray, version: int) -> None:
        with torch.no_grad():
            torch.nn.utils.vector_to_parameters(torch.from_numpy(flat.copy()), self.params)
        self.version = version

    def weights(self) -> tuple[np.ndarray, int]:
        return torch.nn.utils.parameters_to_vector(self.params).detach().numpy().copy(), self.version


class RemoteParams:
    def __init__(self, server_handle):
        self.server = server_handle

    def pull(self, local: torch.nn.Module) -> int:
        import ray

        flat, version = ray.get(self.server.weights.remote())
        with torch.no_grad():
            torch.nn.utils.vector_to_parameters(torch.from_numpy(flat), local.parameters())
        return version

    def push(self, local: torch.nn.Module, version: int) -> int:
        import ray

        grads = torch.cat([p.grad.reshape(-1) for p in local.parameters()]).numpy()
        return ray.get(self.server.apply.remote(grads, version))
