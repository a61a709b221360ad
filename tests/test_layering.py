"""Imports point down only (STYLE.md): a small import-contract check over the source tree."""

import ast
import re
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
    "agents": {"runtime", "api", "cli"},  # components get service handles; they never learn what runs them
    "datasets": {"replay", "models", "runtime", "agents", "api", "cli"},  # files in, episodes out
    "bench": {"cli"},  # on top of the API, as a user's script is
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


def test_agents_import_no_transport():
    """No component or builder knows its transport: no Ray, no multiprocessing, no gRPC in agents/."""
    for path in (SRC / "agents").rglob("*.py"):
        text = path.read_text()
        for word in ("import ray", "from ray", "multiprocessing", "import grpc"):
            assert word not in text, f"{path.relative_to(SRC)}: {word}"


def test_backends_know_no_system():
    """A new system adds roles and services, never a branch in a backend: backends and services name no system."""
    systems = ("a2c", "a3c", "impala", "apex", "gorila", "r2d2", "ddpg", "qt_opt")  # ("seed" is also a random seed)
    for path in list((SRC / "runtime" / "backends").rglob("*.py")) + list((SRC / "runtime" / "services").rglob("*.py")):
        code = "\n".join(line for line in path.read_text().lower().splitlines() if not line.strip().startswith("#"))
        code = code.split('"""', 2)[-1]  # the module docstring may cite the papers
        for name in systems:
            assert f"{name}_" not in code and f'"{name}"' not in code, f"{path.relative_to(SRC)} names {name}"


def test_trainer_probes_no_attributes():
    """The run loop calls what core's protocols declare, nothing found by probing: no attribute looked up by name or
    in an object's dictionary, no signature inspected (an adapter declares an optional contract by subclassing it)."""
    backends = SRC / "runtime" / "backends"
    paths = [SRC / "runtime" / "trainer.py", *(backends / f"{name}.py" for name in ("inline", "local", "ray", "host")),
             SRC / "runtime" / "run" / "state.py"]
    for path in paths:
        text = path.read_text()
        for probe in ("hasattr(", "getattr(", "vars(", "__dict__", "inspect.", "callable("):
            assert probe not in text, (path, probe)


def test_only_backends_and_service_adapters_place_what_runs_elsewhere():
    """One placement API: a process or a Ray actor is started under ``runtime/backends/`` (components, learner
    replicas, pools of trainers) or by a service's own transport adapter under ``runtime/services/``, nowhere else."""
    allowed = (SRC / "runtime" / "backends", SRC / "runtime" / "services")
    starts = re.compile(r"ray\.remote\(|\b(?:ctx|mp|multiprocessing|context)\.Process\(|start_process\(|\.remote\(")
    bad = []
    for path in SRC.rglob("*.py"):
        if any(folder in path.parents for folder in allowed):
            continue
        bad += [f"{path.relative_to(SRC)}: {m.group(0)}" for m in starts.finditer(path.read_text())]
    assert not bad, bad


def test_services_import_no_backend():
    """Backends build service adapters, never the other way round: ``runtime/services/`` imports nothing from
    ``runtime/backends/`` (the shared-memory arrays both use sit below both, in ``runtime/shared_memory.py``)."""
    bad = []
    for path in (SRC / "runtime" / "services").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else \
                [a.name for a in node.names] if isinstance(node, ast.Import) else []
            bad += [f"{path.relative_to(SRC)} imports {n}" for n in names if n.startswith("distrl.runtime.backends")]
    assert not bad, bad
