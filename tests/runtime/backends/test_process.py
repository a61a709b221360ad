"""How component processes start on ``local``: forked from a forkserver that imported torch once, each with
SIGINT ignored from its first instruction and the environment its starter had when it started it; a user's
script without a ``__main__`` guard is not run again in them."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from distrl.runtime.backends.process import process_context, start_process
from tests.procfs import alive

ROOT = Path(__file__).resolve().parents[3]


def _report(queue) -> None:
    queue.put((signal.getsignal(signal.SIGINT) == signal.SIG_IGN, os.environ.get("DISTRL_TEST_LATE_VARIABLE"),
               os.getppid()))


def test_a_component_starts_with_sigint_ignored_and_the_environment_of_its_start(monkeypatch):
    ctx = process_context()  # the server starts here (or ran already): before the variable below exists
    monkeypatch.setenv("DISTRL_TEST_LATE_VARIABLE", "set after the server started")
    queue = ctx.Queue()
    p = start_process(ctx, _report, (queue,), "distrl-test")
    try:
        ignored, variable, parent = queue.get(timeout=60)
    finally:
        p.join(timeout=60)
    assert ignored and variable == "set after the server started"
    if ctx.get_start_method() == "forkserver":  # the server, not this process, is the parent, and it has torch
        assert parent != os.getpid() and "libtorch" in Path(f"/proc/{parent}/maps").read_text()


STARTER = """
import sys, time
from distrl.runtime.backends.process import process_context, start_process
from sleeper import sleep
ctx = process_context()
p = start_process(ctx, sleep, (), "distrl-test-sleeper")
print(p.pid, flush=True)
time.sleep(600)
"""

SLEEPER = """
import time
from distrl.runtime.backends.process import die_with_parent

def sleep():
    die_with_parent()
    time.sleep(600)  # no pipe to watch: only the kernel's PR_SET_PDEATHSIG can end it
"""


def test_a_component_of_a_killed_starter_is_ended_by_the_kernel(tmp_path):
    """The starter is SIGKILLed: the server sees it gone and exits (no child holds the server's "alive" pipe
    open), and a component that watches nothing gets SIGTERM from PR_SET_PDEATHSIG."""
    (tmp_path / "sleeper.py").write_text(SLEEPER)
    path = os.pathsep.join([str(tmp_path), str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])
    starter = subprocess.Popen([sys.executable, "-c", STARTER], cwd=tmp_path, env=dict(os.environ, PYTHONPATH=path),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    child = None
    try:
        line = starter.stdout.readline()  # the starter prints the pid, or exits (then its stderr says why)
        assert line.strip().isdigit(), starter.communicate(timeout=60)[1][-2000:]
        child = int(line)
        assert alive(child)
        starter.kill()
        starter.wait(timeout=30)
        deadline = time.monotonic() + 30
        while alive(child) and time.monotonic() < deadline:
            time.sleep(0.1)  # a bounded wait for the server to notice and the kernel to signal
        assert not alive(child), "the component outlived its killed starter"
    finally:
        if starter.poll() is None:
            starter.kill()
            starter.wait()
        if child is not None and alive(child):
            os.kill(child, signal.SIGKILL)


def test_a_script_without_a_main_guard_runs_once(tmp_path):
    script = tmp_path / "train.py"
    script.write_text("import distrl\n"
                      "print('script started', flush=True)\n"
                      f"distrl.train('impala', env='CartPole-v1', runtime='local', total_steps=2000, num_actors=2, "
                      f"run_dir={str(tmp_path / 'run')!r}, progress=False)\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=240,
                       env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.count("script started") == 1, r.stdout
