"""Lexicographic Q-learning's action choice (Skalse et al. 2022, "Lexicographic Multi-Objective Reinforcement
Learning", arXiv:2212.13769, section 4.1): the actions within ``slack`` of the first objective's best are all
acceptable, and among them the second objective's best is taken.

Written as one table of acting values per state, so every consumer of a Q table (the greedy argmax, epsilon-greedy's
draws among the legal actions, the double-Q target's argmax, an exported graph) takes the lexicographic choice: an
acceptable action's value is its second-objective Q, every other legal action sits at least 1 below the lowest of
those, in its first-objective order; an illegal one (``masked``) stays where it was.
"""

from __future__ import annotations

import torch


def lexicographic_values(first: torch.Tensor, second: torch.Tensor, slack: float, masked: float) -> torch.Tensor:
    """``[..., A]`` acting values from two ``[..., A]`` Q tables whose illegal actions both hold ``masked`` (a very
    low number): argmax is argmax over {a: first[a] >= max first - slack} of ``second``."""
    legal = first > masked / 2
    best = first.max(dim=-1, keepdim=True).values
    accepted = legal & (first >= best - slack)
    floor = torch.where(accepted, second, torch.inf).min(dim=-1, keepdim=True).values
    below = floor - 1.0 - (best - first)
    return torch.where(accepted, second, torch.where(legal, below, first))
