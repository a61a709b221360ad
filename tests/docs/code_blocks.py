"""Running a page's code blocks as written, so a snippet can never rot (the README's, ``tests/test_readme.py``, and
every page of the docs site, ``tests/docs/test_pages.py``): ``python`` blocks are executed, the ``$ distrl ...``
lines of ``text`` blocks give the output shown below them, and the ``distrl`` commands of ``bash`` blocks run in
order in one folder, their training cut short by a small ``--total-steps`` (or ``max_wall_s`` where the budget is
not env steps). ``shell`` blocks (commands for other machines, a GPU, a cluster) are shown and not run; ``pip``
lines are what this suite was installed by; ``distrl bench`` is run by ``tests/bench/test_runner.py``, which checks
its report."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = ROOT / "docs"


def pages() -> list[Path]:
    """Every page of the docs site."""
    return sorted(DOCS.rglob("*.md"))


def blocks(page: Path) -> list[tuple[str, str]]:
    """(language, code) for every fenced block of a page."""
    return [(m.group(1), m.group(2)) for m in re.finditer(r"```(\w*)\n(.*?)```", page.read_text(), re.S)]


def python_blocks(page: Path) -> list[str]:
    return [code for lang, code in blocks(page) if lang == "python"]


def examples(page: Path) -> list[tuple[str, str]]:
    """(command, expected output line) pairs from the ``text`` blocks."""
    out = []
    for lang, code in blocks(page):
        if lang != "text":
            continue
        lines = code.strip().splitlines()
        out += [(line[2:], lines[i + 1]) for i, line in enumerate(lines)
                if line.startswith("$ distrl") and i + 1 < len(lines)]
    return out


def shell_commands(page: Path) -> list[str]:
    """The ``distrl`` commands of a page's ``bash`` blocks, in order."""
    commands = []
    for lang, code in blocks(page):
        if lang != "bash":
            continue
        for line in code.replace("\\\n", " ").splitlines():
            line = line.split("#", 1)[0].strip()
            commands += [p for p in (part.strip() for part in line.split("&&")) if p.startswith("distrl ")]
    return commands


def env() -> dict:
    return dict(os.environ, PYTHONPATH=str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""))


def run_python(code: str, cwd: Path) -> None:
    r = subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=240, env=env())
    assert r.returncode == 0, r.stderr[-3000:]


def run_example(command: str, expected: str, cwd: Path) -> None:
    r = subprocess.run([sys.executable, "-m", "distrl", *shlex.split(command)[1:]], cwd=cwd, capture_output=True,
                       text=True, timeout=120, env=env())
    assert r.returncode == 2 and r.stderr.strip() == expected, r.stderr


@cache
def _has_actors(system: str) -> bool:
    from dataclasses import fields

    from distrl.agents.registry import get_system

    return any(f.name == "num_actors" for f in fields(get_system(system).Config))


def shortened(command: str) -> str | None:
    """The command as the tests run it (cut short), or None where another test runs it (``distrl bench``)."""
    words = shlex.split(command)
    if words[1] == "bench":  # run, cut to one small cell, with its report checked, by
        return None  # tests/bench/test_runner.py::test_bench_writes_report_json_and_plots_and_resumes
    if words[1] == "train":  # the same command, cut short: by env steps (the last --total-steps wins), not by a wall
        # time a busy machine could spend starting its processes (a run with no step has no metrics.csv for the next
        # command, `distrl plot`, to read); a bound on wall time stays as a backstop, and is the cut for a run
        # without env steps (QT-Opt offline, whose budget is learner updates)
        offline = "online=false" in command
        actors = " --set num_actors=2" if _has_actors(words[2]) else ""
        return command + f" --quiet{actors} --total-steps 1000 --set max_wall_s={2 if offline else 60}"
    if words[1] == "pbt":
        return command + " --set max_wall_s=2"  # the population, cut short the same way
    if words[1] == "league":  # one slice of one small batch per player (a system with PPO's or IMPALA's actors)
        return command + (" --quiet --total-steps 1024 --slice-steps 1024 --set num_envs=8 --set unroll_length=128 "
                          "--set max_wall_s=60")
    return command


def run_shell_commands(commands: list[str], cwd: Path) -> None:
    """Every command in order in ``cwd`` (a ``my.yaml`` there for the configuration example)."""
    (cwd / "my.yaml").write_text("run:\n  log_interval_s: 0.5\nsystem:\n  num_envs: 32\n")
    for command in commands:
        cut = shortened(command)
        if cut is None:
            continue
        r = subprocess.run(cut.replace("distrl ", f"{shlex.quote(sys.executable)} -m distrl ", 1), shell=True,
                           cwd=cwd, capture_output=True, text=True, timeout=240, env=env())
        assert r.returncode == 0, (command, r.stderr[-2000:])
