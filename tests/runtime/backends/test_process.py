"""How component processes start on ``local``: forked from a forkserver that imported torch once, each with
SIGINT ignored from its first instruction and the environment its starter had when it started it; a user's
script without a ``__main__`` guard is not run again in them."""

import os
import signal
import subprocess
import sys
from pathlib import Path

from distrl.runtime.backends.process import process_context, start_process

ROOT = Path(__file__).resolve().parents[3]


def _report(queue) -> None:
    queue.put((signal.getsignal(signal.SIGINT) == signal.SIG_IGN, os.environ.get("DISTRL_TEST_LATE_VARIABLE"),
               "torch" in sys.modules))


def test_a_component_starts_with_sigint_ignored_and_the_environment_of_its_start(monkeypatch):
    ctx = process_context()  # the server starts here (or ran already): before the variable below exists
    monkeypatch.setenv("DISTRL_TEST_LATE_VARIABLE", "set after the server started")
    queue = ctx.Queue()
    p = start_process(ctx, _report, (queue,), "distrl-test")
    try:
        ignored, variable, torch_loaded = queue.get(timeout=60)
    finally:
        p.join(timeout=60)
    assert ignored and variable == "set after the server started"
    if ctx.get_start_method() == "forkserver":
        assert torch_loaded  # imported once by the server, not by each component


def test_a_script_without_a_main_guard_runs_once(tmp_path):
    script = tmp_path / "train.py"
    script.write_text("import distrl\n"
                      "print('script started', flush=True)\n"
                      f"distrl.train('impala', env='CartPole-v1', runtime='local', total_steps=2000, num_actors=2, "
                      f"run_dir={str(tmp_path / 'run')!r}, progress=False)\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=240, env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.count("script started") == 1, r.stdout
