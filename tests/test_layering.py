"""Imports point down only (STYLE.md): a small import-contract check over the source tree."""

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "distrl"

# package -> distrl packages it must not import
FORBIDDEN = {
    "ops": {"replay", "models", "envs", "runtime", "agents", "api", "cli"},
    "core": {"ops", "replay", "models", "envs", "runtime", "agents", "api", "cli"},
    "replay": {"models", "envs", "runtime", "agents", "api", "cli"},
    "models": {"replay", "envs", "runtime", "agents", "api", "cli"},
    "envs": {"replay", "models", "runtime", "agents", "api", "cli"},
    "runtime": {"agents", "api", "cli"},
    "agents": {"api", "cli"},
}


def distrl_imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("distrl."):
            found.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("distrl."):
                    found.add(alias.name.split(".")[1])
    return found


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_imports_point_down(package):
    bad = []
    for path in (SRC / package).rglob("*.py"):
        wrong = distrl_imports(path) & FORBIDDEN[package]
        if wrong:
            bad.append(f"{path.relative_to(SRC)} imports {sorted(wrong)}")
    assert not bad, bad


def test_builders_import_no_transport():
    for path in (SRC / "agents").rglob("builder.py"):
        text = path.read_text()
        assert "import ray" not in text and "multiprocessing" not in text, path
