"""What the benchmark ran on: a report's numbers mean little without the machine and the versions."""

from __future__ import annotations

import os
import platform
import subprocess
from importlib import metadata
from pathlib import Path

PACKAGES = ("distrl", "torch", "numpy", "gymnasium", "ray", "ale-py", "envpool", "mujoco", "stable-baselines3")


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _gpu() -> str:
    import torch

    if torch.cuda.is_available():
        return ", ".join(torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count()))
    return "none"


def _commit() -> str | None:
    try:
        here = Path(__file__).resolve().parent
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=here, capture_output=True, text=True, timeout=5, check=False
        )
        return out.stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


def describe() -> dict:
    import psutil

    versions = {}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            pass
    return {"cpu": _cpu_model(), "logical_cores": os.cpu_count(), "physical_cores": psutil.cpu_count(logical=False),
            "memory_gib": round(psutil.virtual_memory().total / 2**30, 1), "gpu": _gpu(),
            "os": f"{platform.system()} {platform.release()}", "python": platform.python_version(),
            "versions": versions, "commit": _commit()}


def one_line(m: dict) -> str:
    return (
        f"{m['cpu']}, {m['logical_cores']} logical cores ({m['physical_cores']} physical), {m['memory_gib']} GiB, "
        f"GPU: {m['gpu']}; {m['os']}, Python {m['python']}; "
        + ", ".join(f"{k} {v}" for k, v in m["versions"].items())
        + (f"; commit {m['commit']}" if m.get("commit") else "")
    )
