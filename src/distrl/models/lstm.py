"""An LSTM core that resets its state at episode starts, for recurrent agents (R2D2, SEED)."""

from __future__ import annotations

import torch
from torch import nn


class LSTMCore(nn.Module):
    """Runs ``[T, B, F]`` features through an LSTM, zeroing the state where ``first[t]`` is set
    (the first step of a new episode), so one unroll can span several episodes."""

    def __init__(self, in_dim: int, hidden: int = 256):
        super().__init__()
        self.cell = nn.LSTMCell(in_dim, hidden)
        self.out_dim = hidden

    def initial_state(self, batch: int, device=None) -> tuple[torch.Tensor, torch.Tensor]:
        z = torch.zeros(batch, self.out_dim, device=device)
        return z, z.clone()

    def forward(self, x: torch.Tensor, state: tuple[torch.Tensor, torch.Tensor], first: torch.Tensor):
        h, c = state
        outs = []
        for t in range(x.shape[0]):
            keep = (~first[t].bool()).to(x.dtype).unsqueeze(1)
            h, c = self.cell(x[t], (h * keep, c * keep))
            outs.append(h)
        return torch.stack(outs), (h, c)
