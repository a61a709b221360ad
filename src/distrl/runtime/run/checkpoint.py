"""Safe checkpoints: safetensors for every tensor, JSON for everything else; nothing is unpickled.

A checkpoint is a folder ``checkpoints/step-<env_steps>/`` holding ``model.safetensors``,
``optimizer.safetensors`` (flattened ``torch.optim`` state) and ``state.json`` (counters and the
optimizer's non-tensor fields). It is written to a temporary folder and renamed into place, so a
crash mid-write never leaves a half checkpoint behind the ``latest`` one.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file, save_file

PREFIX = "step-"


def _flatten_optimizer(state: dict) -> tuple[dict[str, torch.Tensor], dict]:
    tensors, scalars = {}, {}
    for pid, entries in state["state"].items():
        for name, value in entries.items():
            if isinstance(value, torch.Tensor):
                tensors[f"{pid}.{name}"] = value.detach().contiguous().clone()
            else:
                scalars[f"{pid}.{name}"] = value
    return tensors, {"scalars": scalars, "param_groups": state["param_groups"]}


def _unflatten_optimizer(tensors: dict[str, torch.Tensor], meta: dict) -> dict:
    state: dict[int, dict[str, Any]] = {}
    for key, value in list(tensors.items()) + list(meta["scalars"].items()):
        pid, name = key.split(".", 1)
        state.setdefault(int(pid), {})[name] = value
    return {"state": state, "param_groups": meta["param_groups"]}


def save_checkpoint(root: str | Path, env_steps: int, modules: dict[str, torch.nn.Module],
                    optimizers: dict[str, torch.optim.Optimizer], counters: dict[str, Any], keep: int = 3,
                    extra=None) -> Path:
    """Write one checkpoint and prune all but the ``keep`` newest. Returns its folder."""
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    final = root / f"{PREFIX}{env_steps:012d}"
    tmp = root / f".tmp-{PREFIX}{env_steps:012d}-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    meta: dict[str, Any] = {"counters": counters, "optimizers": {}}
    for name, module in modules.items():
        save_file({k: v.detach().contiguous().clone() for k, v in module.state_dict().items()}, str(tmp / f"{name}.safetensors"))
    for name, opt in optimizers.items():
        tensors, opt_meta = _flatten_optimizer(opt.state_dict())
        save_file(tensors, str(tmp / f"{name}.optim.safetensors"))
        meta["optimizers"][name] = opt_meta
    (tmp / "state.json").write_text(json.dumps(meta, indent=1))
    if extra is not None:  # components with more state (a replay) write their own safe files here
        extra(tmp)
    if final.exists():
        shutil.rmtree(final)
    os.replace(tmp, final)
    for old in list_checkpoints(root)[:-keep]:
        shutil.rmtree(old, ignore_errors=True)
    return final


def list_checkpoints(root: str | Path) -> list[Path]:
    root = Path(root)
    if not root.is_dir():
        return []
    return sorted(p for p in root.iterdir() if p.is_dir() and p.name.startswith(PREFIX))


def latest_checkpoint(root: str | Path) -> Path | None:
    found = list_checkpoints(root)
    return found[-1] if found else None


def load_checkpoint(path: str | Path, modules: dict[str, torch.nn.Module],
                    optimizers: dict[str, torch.optim.Optimizer] | None = None) -> dict[str, Any]:
    """Load weights (and optimizer state) in place; return the saved counters."""
    path = Path(path)
    meta = json.loads((path / "state.json").read_text())
    for name, module in modules.items():
        module.load_state_dict(load_file(str(path / f"{name}.safetensors")))
    for name, opt in (optimizers or {}).items():
        tensors = load_file(str(path / f"{name}.optim.safetensors"))
        opt.load_state_dict(_unflatten_optimizer(tensors, meta["optimizers"][name]))
    return meta["counters"]
