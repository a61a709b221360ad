"""The README's code blocks run as written, so a snippet can never rot: Python blocks are executed, the
`$ distrl ...` examples give the output shown, and the `distrl` commands of the shell blocks run (with
their training cut short by a small ``--total-steps``, or ``max_wall_s`` where the budget is not env steps;
``pip install`` lines are what this suite was installed by; the ``distrl bench`` line is run by
``tests/bench/test_runner.py``, which checks its report)."""

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
BLOCKS = [(m.group(1), m.group(2)) for m in re.finditer(r"```(\w*)\n(.*?)```", README, re.S)]


def _env():
    return dict(os.environ, PYTHONPATH=str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""))


@pytest.mark.parametrize("code", [code for lang, code in BLOCKS if lang == "python"])
def test_python_blocks_run(tmp_path, code):
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=240, env=_env())
    assert r.returncode == 0, r.stderr[-3000:]


def _examples():
    """(command, expected output line) pairs from the ``text`` blocks."""
    for lang, code in BLOCKS:
        if lang != "text":
            continue
        lines = code.strip().splitlines()
        for i, line in enumerate(lines):
            if line.startswith("$ distrl") and i + 1 < len(lines):
                yield line[2:], lines[i + 1]


@pytest.mark.parametrize("command,expected", list(_examples()))
def test_error_examples_print_what_the_readme_shows(tmp_path, command, expected):
    args = shlex.split(command)[1:]
    r = subprocess.run([sys.executable, "-m", "distrl", *args], cwd=tmp_path, capture_output=True, text=True,
                       timeout=120, env=_env())
    assert r.returncode == 2 and r.stderr.strip() == expected, r.stderr


def _shell_commands() -> list[str]:
    commands = []
    for lang, code in BLOCKS:
        if lang != "bash":
            continue
        for line in code.replace("\\\n", " ").splitlines():
            line = line.split("#", 1)[0].strip()
            parts = [p.strip() for p in line.split("&&")]
            commands += [p for p in parts if p.startswith("distrl ")]
    return commands


def test_shell_blocks_run_in_order(tmp_path):
    (tmp_path / "my.yaml").write_text("run:\n  log_interval_s: 0.5\nsystem:\n  num_envs: 32\n")
    commands = _shell_commands()
    assert any(c.startswith("distrl train") for c in commands) and any(c.startswith("distrl eval") for c in commands)
    for command in commands:
        if command.startswith("distrl train"):  # the same command, cut short: by env steps (the last --total-steps
            # wins), not by a wall time a busy machine could spend starting its processes (a run with no step has
            # no metrics.csv for the next command, `distrl plot`, to read); a bound on wall time stays as a backstop,
            # and is the cut for a run without env steps (QT-Opt offline, whose budget is learner updates)
            offline = "online=false" in command
            command += f" --quiet --set num_actors=2 --total-steps 1000 --set max_wall_s={2 if offline else 60}"
        if command.startswith("distrl pbt"):
            command += " --set max_wall_s=2"  # the population, cut short the same way
        if command.startswith("distrl bench"):  # run, cut to one small cell, with its report checked, by
            continue  # tests/bench/test_runner.py::test_bench_writes_report_json_and_plots_and_resumes
        r = subprocess.run(command.replace("distrl ", f"{shlex.quote(sys.executable)} -m distrl ", 1), shell=True,
                           cwd=tmp_path, capture_output=True, text=True, timeout=240, env=_env())
        assert r.returncode == 0, (command, r.stderr[-2000:])
