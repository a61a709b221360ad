"""``distrl bench`` end to end: a real (small) cell, its report and plots, resume, bad input, stopping."""

import json
import os
import shlex
import signal
import subprocess
import sys
import time

import psutil
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from distrl.bench.runner import check_args
from distrl.errors import ConfigError
from tests.conftest import ROOT
from tests.test_readme import _shell_commands

SMALL = ["--systems", "a2c", "--no-pong", "--max-wall-s", "2", "--ceiling-s", "0.3", "--episodes", "2", "--quiet"]
# (the learner alone is timed over whole batches after its first, however short the window: ~1 s each for A2C)
# the README's `distrl bench` command (tests/test_readme.py leaves it to this file: it would run the same cell again),
# without --peers (the peers extra is not the suite's)
README_BENCH = next(([a for a in shlex.split(c)[2:] if a != "--peers"] for c in _shell_commands()
                     if c.startswith("distrl bench")), None)


def test_bench_writes_report_json_and_plots_and_resumes(cli, tmp_path):
    """The README's command, cut to one small cell: its report, plots, resume, and what it refuses."""
    assert README_BENCH and "--out" in README_BENCH, "the README shows no `distrl bench ... --out DIR` command"
    out, bench = tmp_path / README_BENCH[README_BENCH.index("--out") + 1], ["bench", *README_BENCH, *SMALL]
    r = cli(*bench, cwd=tmp_path, timeout=240)
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout.strip().splitlines()[-1])
    assert summary["cells"] == 1 and summary["failed"] == 0
    report = json.loads((out / "report.json").read_text())
    assert report["machine"]["logical_cores"] == os.cpu_count() and "torch" in report["machine"]["versions"]
    cell = report["cells"][0]
    assert cell["cell"]["system"] == "a2c" and cell["cell"]["runtime"] == "inline"
    assert cell["env_steps"] > 0 and cell["sps"] > 0 and cell["command_s"] >= cell["train_s"]
    a, b = cell["ceiling"]["actors_alone_sps"], cell["ceiling"]["learner_alone_sps"]
    assert a > 0 and b > 0 and cell["ceiling"]["ceiling_sps"] == pytest.approx(1.0 / (1.0 / a + 1.0 / b))
    assert cell["peak_memory_mb"] > 50 and cell["final_eval"] is not None and cell["curve"]
    assert cell["bottleneck"] and cell["learner_wait_frac"] is not None
    assert cell["precision"] == "fp32"  # what the run chose, from its config.yaml
    text = (out / "report.md").read_text()
    assert "| a2c | CartPole-v1 | inline | 0 |" in text
    assert "atari extra" not in text  # --no-pong is a choice, not a missing extra
    for png in ("curves-CartPole-v1.png", "throughput.png"):
        assert (out / png).read_bytes()[:4] == b"\x89PNG"
    # --resume keeps what finished: the cell is not run again
    kept = (out / "cells" / "a2c__CartPole-v1__inline__s0" / "result.json").stat().st_mtime_ns
    r = cli(*bench, "--resume", cwd=tmp_path, timeout=120)
    assert r.returncode == 0, r.stderr
    assert (out / "cells" / "a2c__CartPole-v1__inline__s0" / "result.json").stat().st_mtime_ns == kept
    assert json.loads((out / "report.json").read_text())["command"] == report["command"]  # the command that ran it
    # --resume with other arguments is refused: its cells would not be the ones asked for
    r = cli(*bench, "--episodes", "3", "--resume", cwd=tmp_path)
    assert r.returncode == 2 and "differ" in r.stderr and "Traceback" not in r.stderr
    # an existing bench is not overwritten without --force: one line, exit 2, nothing changed
    before = sorted(p.name for p in out.iterdir())
    r = cli(*bench, cwd=tmp_path)
    assert r.returncode == 2 and "--resume" in r.stderr and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and sorted(p.name for p in out.iterdir()) == before


def test_bad_cli_values_are_one_line(cli, tmp_path):
    for args, said in [(["--systems", "nope"], "valid: a2c"), (["--suite", "huge"], "valid: quick, full"),
                       (["--runtimes", "k8s"], "valid: inline, local, ray"), (["--max-wall-s", "0"], "> 0"),
                       (["--resume"], "no bench run")]:
        r = cli("bench", *args, "--out", str(tmp_path / "x"))
        assert r.returncode == 2 and said in r.stderr and "Traceback" not in r.stderr, (args, r.stderr)
        assert not (tmp_path / "x").exists()


@settings(max_examples=200, deadline=None)
@given(
    suite=st.text(max_size=8),
    systems=st.lists(st.text(max_size=10), max_size=3),
    runtimes=st.lists(st.text(max_size=8), max_size=2),
    seeds=st.one_of(st.none(), st.lists(st.integers(-5, 5), max_size=3)),
    wall=st.one_of(st.none(), st.floats(allow_nan=True)),
    ceiling=st.floats(allow_nan=True),
    episodes=st.integers(-3, 30),
)
def test_check_args_accepts_exactly_the_valid_values(suite, systems, runtimes, seeds, wall, ceiling, episodes):
    valid = (
        suite in ("quick", "full", "beyond")
        and all(
            s
            in {
                "a2c",
                "a3c",
                "impala",
                "seed",
                "apex-dqn",
                "gorila",
                "es",
                "apex-ddpg",
                "qt-opt",
                "r2d2",
                "seed-r2d2",
                "r2d3",
            }
            for s in systems
        )
        and all(r in ("inline", "local", "ray") for r in runtimes)
        and (seeds is None or (seeds and min(seeds) >= 0))
        and (wall is None or wall > 0)
        and ceiling > 0
        and episodes >= 1
    )
    try:
        check_args(suite, systems, runtimes, seeds, wall, ceiling, episodes)
        assert valid
    except ConfigError as e:
        assert not valid
        assert "\n" not in str(e)


def _processes_naming(path) -> list[str]:
    """Processes whose command line or working directory names ``path``: what a bench run left behind."""
    found = []
    for p in psutil.process_iter(["cmdline"]):
        try:
            if any(str(path) in part for part in p.info["cmdline"] or []):
                found.append(" ".join(p.info["cmdline"]))
        except psutil.Error:
            continue
    return found


def test_sigterm_stops_the_running_cell_and_leaves_no_process(tmp_path):
    # QT-Opt: a budget of minutes here, so the cell is surely still training when the signal comes
    out = tmp_path / "bench"
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.Popen([sys.executable, "-m", "distrl", "bench", "--systems", "qt-opt", "--no-pong", "--runtimes",
                             "local", "--max-wall-s", "300", "--ceiling-s", "0.1", "--quiet", "--out", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    metrics = out / "cells" / "qt-opt__Pendulum-v1__local__s0" / "run" / "metrics.csv"
    deadline = time.monotonic() + 180
    while not metrics.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)  # a bounded wait for the cell's training to have begun
    assert metrics.exists(), proc.stderr.read() if proc.poll() is not None else "no training after 180 s"
    # the cell's run and its components: all started before the first metrics row
    family = psutil.Process(proc.pid).children(recursive=True)
    assert len(family) >= 3
    proc.send_signal(signal.SIGTERM)
    try:
        _, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert proc.returncode == 130 and "interrupted" in err and "Traceback" not in err, err
    deadline = time.monotonic() + 30
    while (left := _processes_naming(out)) and time.monotonic() < deadline:
        time.sleep(0.2)  # the run's processes may take a moment to exit after the run returned
    assert not left, left
    _, alive = psutil.wait_procs(family, timeout=30)
    assert not alive, [p.name() for p in alive]
    assert not (out / "cells" / "qt-opt__Pendulum-v1__local__s0" / "result.json").exists()  # run again by --resume
    assert list((metrics.parent / "checkpoints").iterdir())  # the run ended with its checkpoint


def test_a_ceiling_is_kept_per_cells_settings(tmp_path, monkeypatch):
    """Cells that differ only in their seed share a measured ceiling; a cell whose settings differ (a preset changed
    before a resumed bench) is measured anew, not handed the other settings' ceiling."""
    from distrl.bench import runner
    from distrl.bench.suite import Cell

    measured = []

    def measure(system, env, settings, n, seconds, has_learner, runtime="local"):
        measured.append(dict(settings))
        return {"learner_missing": False, "settings": dict(settings)}

    monkeypatch.setattr(runner.ceiling_mod, "measure", measure)
    fp32 = Cell("impala", "CartPole-v1", "local", seed=0, settings={"precision": "fp32"})
    assert runner._ceiling(tmp_path, fp32, 1.0)["settings"] == {"precision": "fp32"}
    assert runner._ceiling(tmp_path, Cell("impala", "CartPole-v1", "local", seed=1, settings={"precision": "fp32"}),
                           1.0)["settings"] == {"precision": "fp32"}
    assert runner._ceiling(tmp_path, Cell("impala", "CartPole-v1", "local", settings={"precision": "bf16"}),
                           1.0)["settings"] == {"precision": "bf16"}
    assert measured == [{"precision": "fp32"}, {"precision": "bf16"}]
