"""A tanh MLP's forward and backward in one autograd node, for the CPU learners of the actor-critic systems.

Why: on a CPU, torch's ``tanh`` is not vectorised (about 90 us for a 512 x 64 float32 tensor where ``sigmoid`` takes
15, torch 2.13), and an update of the classic-control network (two torsos of two 64-unit layers, minibatches of
512) spends about half its time in per-operation overhead: each linear layer and activation is an autograd node of
its own. Here tanh is computed as ``2 sigmoid(2x) - 1`` (the same function; within 2e-7 of ``torch.tanh`` in
float32, an absolute bound: near 0 it rounds to steps of about 6e-8), in place on the layer's output, and the whole
MLP is one node whose backward is the chain rule written out: for each layer from the last, ``gz = g (1 - h^2)``,
``dW = gz^T h_prev``, ``db = sum(gz)``, ``g = gz W``. Off the CPU (CUDA's tanh is fast, and one kernel a layer is
what a GPU wants) the layers run as usual. Not for second derivatives (the node is once differentiable) or
``torch.func`` transforms; nothing in distrl takes either through an actor-critic network.
"""

from __future__ import annotations

import torch


def tanh_(z: torch.Tensor) -> torch.Tensor:
    """tanh(z), written over ``z`` (a layer's fresh output): ``2 sigmoid(2z) - 1``, vectorised on a CPU."""
    return torch.sigmoid_(z.mul_(2.0)).mul_(2.0).sub_(1.0)


def _forward(x: torch.Tensor, weights: tuple[torch.Tensor, ...]) -> list[torch.Tensor]:
    """The input and every layer's output, ``weights`` as (W1, b1, W2, b2, ...)."""
    hs = [x]
    for w, b in zip(weights[::2], weights[1::2]):
        hs.append(tanh_(torch.addmm(b, hs[-1], w.t())))
    return hs


class _TanhMLP(torch.autograd.Function):
    """Once differentiable: a second derivative (``create_graph``) raises rather than miss the activations' terms."""

    @staticmethod
    def forward(ctx, x: torch.Tensor, *weights: torch.Tensor) -> torch.Tensor:
        hs = _forward(x, weights)
        ctx.save_for_backward(*hs, *weights[::2])
        return hs[-1]

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad: torch.Tensor):
        saved, wanted = ctx.saved_tensors, ctx.needs_input_grad
        layers = len(saved) // 2
        hs, ws = saved[:layers + 1], saved[layers + 1:]
        grads: list[torch.Tensor | None] = [None] * (1 + 2 * layers)
        g = grad
        for i in range(layers - 1, -1, -1):
            gz = torch.ops.aten.tanh_backward(g, hs[i + 1])  # g (1 - h^2)
            if wanted[1 + 2 * i]:  # (a frozen layer's are not computed)
                grads[1 + 2 * i] = gz.t().mm(hs[i])
            if wanted[2 + 2 * i]:
                grads[2 + 2 * i] = gz.sum(0)
            if i == 0 and not wanted[0]:
                break
            g = gz.mm(ws[i])
        else:
            grads[0] = g
        return tuple(grads)


def tanh_mlp(x: torch.Tensor, layers: list[torch.nn.Linear]) -> torch.Tensor:
    """``tanh(... tanh(x W1^T + b1) ... W_n^T + b_n)`` for a 2-D float32 ``x`` on a CPU: one autograd node when a
    gradient is needed, plain in-place arithmetic when not."""
    weights = tuple(t for layer in layers for t in (layer.weight, layer.bias))
    if torch.is_grad_enabled() and (x.requires_grad or any(w.requires_grad for w in weights)):
        return _TanhMLP.apply(x, *weights)
    return _forward(x, weights)[-1]
