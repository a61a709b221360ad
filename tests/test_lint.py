"""The code passes ruff with the project's rules (``[tool.ruff]`` in pyproject.toml says which and why)."""

import shutil
import subprocess
import sys

from tests.conftest import ROOT


def test_ruff_finds_nothing():
    ruff = shutil.which("ruff") or [sys.executable, "-m", "ruff"]
    command = [ruff] if isinstance(ruff, str) else ruff
    r = subprocess.run([*command, "check", "--no-cache", "src", "tests", "benchmarks"], cwd=ROOT, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
