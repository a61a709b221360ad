"""Safe checkpoints: safetensors for every tensor, JSON for everything else; nothing is unpickled.

A checkpoint is a folder ``checkpoints/step-<env_steps>/`` holding ``model.safetensors``,
``optimizer.safetensors`` (flattened ``torch.optim`` state) and ``state.json`` (counters and the
optimizer's non-tensor fields). It is written to a temporary folder and renamed into place, so a
crash mid-write never leaves a half checkpoint behind the ``latest`` one.
"""

from __future__ import annotations

import json
import math
import os
import shutil
from pathlib import Path
from typing import Any

import torch
from safetensors import safe_open
from safetensors.torch import load_file, save_file

from distrl.errors import CheckpointNotWritten, ConfigError
from distrl.ops import all_finite

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
    remove_stale_partials(root)
    final = root / f"{PREFIX}{env_steps:012d}"
    tmp = root / f".tmp-{PREFIX}{env_steps:012d}-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        tmp.mkdir()
        _write(tmp, modules, optimizers, counters, extra)
    except Exception as e:  # a full disk (OSError, safetensors' own error), a folder gone: nothing half-written stays
        shutil.rmtree(tmp, ignore_errors=True)
        text = str(e).strip()
        why = getattr(e, "strerror", None) or (text.splitlines()[0][:160] if text else type(e).__name__)
        raise CheckpointNotWritten(f"the checkpoint at {env_steps:,} was not written ({why}); the previous ones are "
                                   "kept") from None
    if final.exists():
        shutil.rmtree(final)
    os.replace(tmp, final)
    kept = list_checkpoints(root)
    last_good = latest_checkpoint(root)  # pruning never deletes the newest loadable checkpoint with finite weights
    for old in kept[:-keep]:
        if old != last_good:
            shutil.rmtree(old, ignore_errors=True)
    return final


def remove_stale_partials(root: Path) -> None:
    """Remove ``.tmp-step-*-PID`` folders whose writer is gone (killed mid-write): never loadable, only disk."""
    for partial in root.glob(f".tmp-{PREFIX}*"):
        pid = partial.name.rsplit("-", 1)[-1]
        if pid.isdigit() and int(pid) != os.getpid() and _alive(int(pid)):
            continue
        shutil.rmtree(partial, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _write(tmp: Path, modules, optimizers, counters, extra) -> None:
    meta: dict[str, Any] = {"counters": counters, "modules": list(modules), "optimizers": {}, "finite": True}
    for name, module in modules.items():
        tensors = {k: v.detach().contiguous().clone() for k, v in module.state_dict().items()}
        meta["finite"] &= all_finite(tensors.values())
        save_file(tensors, str(tmp / f"{name}.safetensors"))
    for name, opt in optimizers.items():
        tensors, opt_meta = _flatten_optimizer(opt.state_dict())
        save_file(tensors, str(tmp / f"{name}.optim.safetensors"))
        meta["optimizers"][name] = opt_meta
    (tmp / "state.json").write_text(json.dumps(meta, indent=1))
    if extra is not None:  # components with more state (a replay) write their own safe files here
        extra(tmp)


def list_checkpoints(root: str | Path) -> list[Path]:
    root = Path(root)
    if not root.is_dir():
        return []
    return sorted(p for p in root.iterdir() if p.is_dir() and p.name.startswith(PREFIX))


def inspect_checkpoint(folder: Path) -> tuple[dict | None, str | None]:
    """(the checkpoint's ``state.json``, None) if the folder looks whole: its JSON parses and each tensor file it
    names is there and covered by its header (safetensors checks the header's offsets against the file's size, so
    a file cut short by a crash or a full disk shows here); else (None, what is wrong). Cheap: no tensor is read."""
    try:
        meta = json.loads((folder / "state.json").read_text())
    except OSError:
        return None, "no state.json"
    except ValueError:
        return None, "state.json is not JSON"
    if not isinstance(meta, dict) or not isinstance(meta.get("counters"), dict):
        return None, "state.json holds no counters"
    modules = meta.get("modules", ["model"])  # checkpoints written before the list was saved hold one "model"
    optimizers = meta.get("optimizers", {})
    if (
        not isinstance(modules, list)
        or not all(isinstance(n, str) for n in modules)
        or not isinstance(optimizers, dict)
    ):
        return None, "state.json does not list its files"
    files = [folder / f"{n}.safetensors" for n in modules] + [folder / f"{n}.optim.safetensors" for n in optimizers]
    for f in files:
        if not f.is_file() or f.stat().st_size == 0:
            return None, f"{f.name} is missing or empty"
        try:
            with safe_open(str(f), "pt"):
                pass
        except Exception as e:  # SafetensorError: a header that does not parse or does not cover the file
            return None, f"{f.name} is damaged: {str(e).splitlines()[0] if str(e) else type(e).__name__}"
    return meta, None


def readable(folder: Path) -> dict | None:
    """The checkpoint's ``state.json`` if the folder looks whole (:func:`inspect_checkpoint`), else ``None``."""
    return inspect_checkpoint(folder)[0]


def latest_checkpoint(root: str | Path, *, finite: bool = True) -> Path | None:
    """The newest checkpoint that looks whole (and, with ``finite``, whose weights were all finite): a newer
    folder left empty or half-written by a crash, or holding NaN weights, is passed over."""
    for folder in reversed(list_checkpoints(root)):
        meta = readable(folder)
        if meta is not None and (meta.get("finite", True) or not finite):
            return folder
    return None


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


def check_counters(saved: dict, identity: dict, folder: Path, former: dict | None = None) -> None:
    """A checkpoint's counters are trusted only after this: the same system and env as the run resuming it
    (where the checkpoint says; or ``former``'s value, the system's name when it was saved), and counts of the
    right types and signs."""
    former = former or {}
    for key, value in identity.items():
        if key in saved and saved[key] != value and (key not in former or saved[key] != former[key]):
            raise ConfigError(f"checkpoint {folder} was saved by a run with {key} {saved[key]!r}, not {value!r}: "
                              f"resume it with its own {key}, or train into another --run-dir")
    for key, kind in (("env_steps", int), ("actor_restarts", int), ("wall_s", (int, float))):
        value = saved.get(key)
        if not isinstance(value, kind) or isinstance(value, bool) or not (value >= 0) or value != value:
            raise ConfigError(f"checkpoint {folder}: state.json holds {key}={value!r}, not a count >= 0")
    episodes = saved.get("episodes", {})
    counts = [episodes.get(k, 0) for k in ("count", "summed")] if isinstance(episodes, dict) else [None]
    if not (isinstance(episodes, dict) and _numbers(episodes.get("returns", []), finite=False)
            and _numbers(episodes.get("lengths", []), int) and _numbers(counts, int) and min(counts) >= 0
            and _numbers([episodes.get("total", 0.0)])):
        raise ConfigError(f"checkpoint {folder}: state.json's episodes are not finished episodes' returns, lengths "
                          "and counts")


def _numbers(values, kind=(int, float), finite: bool = True) -> bool:
    """A list of numbers of ``kind`` (no bools), finite unless told (a return may be NaN: it is reported, not
    summed)."""
    return isinstance(values, list) and all(
        isinstance(v, kind) and not isinstance(v, bool) and (not finite or isinstance(v, int) or math.isfinite(v))
        for v in values)
