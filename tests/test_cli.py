"""The real CLI in a subprocess: exit codes, one-line errors, run dirs, eval JSON, plot, list."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

TINY = ["--total-steps", "5000", "--quiet", "--set", "num_envs=8"]
# A2C's paper update, one per batch: the tests that run a whole CLI command for its plumbing, not for learning


@pytest.mark.parametrize("args,fragment", [
    (["train", "a2cc"], "unknown system 'a2cc'; did you mean 'a2c'?"),
    (["train", "a2c", "--env", "CartPol-v1"], "did you mean 'CartPole-v1'?"),
    (["train", "a2c", "--set", "lrr=0.1"], "unknown setting 'lrr'; did you mean 'lr'?"),
    (["train", "a2c", "--set", "lr=-0.1"], "setting 'lr' must be > 0.0"),
    (["train", "a2c", "--set", "num_envs=0"], "setting 'num_envs' must be >= 1"),
    (["train", "a2c", "--total-steps", "ten"], "setting 'total_steps' must be of type int"),
    (["train", "a2c", "--runtime", "cluster"], "setting 'runtime' must be one of inline, local, ray"),
    (["train", "a2c", "--runtime", "local"], "runtime 'local' is not supported by a2c"),
    (["train", "a2c", "--runtime", "inline", "--set", "runtime=bogus"],
     "setting 'runtime' given twice, by --runtime and by --set runtime=...; give it once"),
    (["eval", "/nonexistent/run"], "is not a run dir"),
    (["frobnicate"], "invalid choice"),
    (["train", "seed", "--env", "CartPole-v1", "--set", "bind=nowhere"], "bind 'nowhere' is not HOST:PORT"),
    (["join", "nowhere"], "join address 'nowhere' is not HOST:PORT"),
    (["join", "127.0.0.1:9", "--timeout", "0.5"], "no SEED server answered at 127.0.0.1:9"),
    (["train", "impala", "--runtime", "ray", "--set", "ray_address=127.0.0.1:9"], "no Ray cluster answered at "
                                                                                  "127.0.0.1:9"),
    (["train", "seed", "--set", "inference_device=cuda:7"], "inference_device=cuda:7"),
    (["train", "impala", "--set", "device=gpu"], "device must be cpu, cuda, cuda:N or auto; got 'gpu'"),
    (["train", "a3c", "--set", "precision=bf16"], "a3c has no central learner"),
    (["train", "es", "--set", "overlap_transfers=on"], "overlap_transfers=on: es has no learner on a device"),
    (["train", "impala", "--set", "num_actors=1", "--set", "batch_unrolls=3"],
     "impala: a learner batch of 3 unrolls never fills on local"),
    (["train", "seed", "--set", "num_envs=8", "--set", "minibatch_by=stream", "--set", "minibatches=9"],
     "minibatches 9 exceeds the env streams"),
    (["train", "appo", "--set", "minibatch_by=steps"], "minibatch_by"),
    (["train", "impala", "--set", "epochs=4"], "unknown setting 'epochs'"),
])
def test_bad_input_is_one_line_exit_2(cli, tmp_path, args, fragment):
    r = cli(*args, cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and fragment in lines[0], r.stderr
    assert "Traceback" not in r.stderr
    assert not (tmp_path / "runs").exists()  # nothing was created


def test_existing_run_dir_is_never_overwritten(cli, tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "precious.txt").write_text("keep me")
    r = cli("train", "a2c", "--run-dir", str(run), *TINY, cwd=tmp_path)
    assert r.returncode == 2 and "--resume" in r.stderr and "--force" in r.stderr
    r = cli("train", "a2c", "--run-dir", str(run), "--set", "lr=-1", "--force", cwd=tmp_path)
    assert r.returncode == 2
    assert (run / "precious.txt").read_text() == "keep me"  # a bad value stops before --force deletes


def test_train_eval_plot_and_resume(cli, tmp_path):
    run = tmp_path / "run"
    r = cli("train", "a2c", "--run-dir", str(run), "--seed", "1", *TINY, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    summary = json.loads((run / "summary.json").read_text())
    for key in (
        "system",
        "env",
        "env_steps",
        "wall_s",
        "sps",
        "episode_return_mean",
        "learner_wait_frac",
        "policy_lag_mean",
        "bottleneck",
    ):
        assert key in summary
    assert summary["env_steps"] >= 5000
    assert (run / "config.yaml").is_file() and (run / "metrics.csv").is_file()
    assert any((run / "tensorboard").iterdir())
    header = (run / "metrics.csv").read_text().splitlines()[0].split(",")
    assert header[:4] == ["env_steps", "wall_s", "sps", "episode_return_mean"]

    r = cli("eval", str(run), "--episodes", "3", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    result = json.loads(r.stdout.strip().splitlines()[-1])
    assert set(result) >= {"mean_return", "std_return", "episodes"} and result["episodes"] == 3

    r = cli("plot", str(run), "-o", str(tmp_path / "c.png"), cwd=tmp_path)
    assert r.returncode == 0 and (tmp_path / "c.png").read_bytes()[:4] == b"\x89PNG"

    rows_before = len((run / "metrics.csv").read_text().splitlines())
    r = cli("train", "a2c", "--run-dir", str(run), "--resume", "--total-steps", "10000", "--quiet", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    resumed = json.loads((run / "summary.json").read_text())
    assert resumed["env_steps"] >= 10000 and resumed["episodes"] > summary["episodes"]
    rows = (run / "metrics.csv").read_text().splitlines()
    assert len(rows) > rows_before
    steps = [int(line.split(",")[0]) for line in rows[1:]]
    assert steps == sorted(steps)  # the curve continues


def test_list_shows_every_system_and_setting(cli):
    r = cli("list")
    assert r.returncode == 0
    for word in ("a2c", "ppo", "impala", "appo"):
        assert word in r.stdout
    ppo = next(line for line in r.stdout.splitlines() if line.split()[:1] == ["ppo"])
    assert "runtimes: inline]" in ppo  # the runtime a newcomer would otherwise learn from a refusal
    r = cli("list", "impala")
    for word in ("num_envs", "unroll_length", "Learning rate", "runtimes: inline, local, ray",
                 "docs/systems/impala.md", "budget: 1,500,000 env steps"):
        assert word in r.stdout
    assert "total_steps" in cli("list", "run").stdout


def test_eval_video_writes_a_gif(cli, tmp_path):
    run = tmp_path / "run"
    assert cli("train", "a2c", "--run-dir", str(run), *TINY, cwd=tmp_path).returncode == 0
    r = cli("eval", str(run), "--episodes", "1", "--video", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    gif = run / "videos" / "eval-episode-0.gif"
    assert gif.read_bytes()[:3] == b"GIF" and json.loads(r.stdout.strip().splitlines()[-1])["video"] == str(gif)


def test_version_and_help_say_what_there_is(cli):
    import tomllib

    from distrl import __version__

    r = cli("--version")
    assert r.returncode == 0 and r.stdout.strip() == f"distrl {__version__}"
    assert tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"] == __version__
    train_help = cli("train", "--help").stdout
    for system in ("a2c", "ppo", "a3c", "impala", "appo", "apex-dqn", "apex-ddpg", "gorila", "seed"):
        assert system in train_help
    assert "(default: 10)" in cli("eval", "--help").stdout.replace("\n", " ").replace("  ", " ")


def _blocked(tmp_path, module: str) -> dict:
    """An environment in which importing ``module`` fails, as it would where it is not installed."""
    fake = tmp_path / "blocked"
    fake.mkdir(exist_ok=True)
    (fake / f"{module}.py").write_text("raise ImportError('not installed')\n")
    return {"PYTHONPATH": str(fake) + os.pathsep + str(ROOT)}


@pytest.mark.parametrize("module,args,fragment", [
    ("ray", ["train", "impala", "--runtime", "ray"], "pip install -e '.[ray]'"),
    ("Box2D", ["train", "impala", "--env", "LunarLander-v3"], "pip install -e '.[box2d]'"),
])
def test_a_missing_extra_is_one_line_naming_the_install(cli, tmp_path, module, args, fragment):
    r = cli(*args, "--total-steps", "1000", cwd=tmp_path, env=_blocked(tmp_path, module))
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and fragment in lines[0] and "Traceback" not in r.stderr, r.stderr
    assert not (tmp_path / "runs").exists()  # checked before the run dir is made


def test_piped_output_is_the_summary_alone_and_the_progress_goes_to_stderr(cli, tmp_path):
    """``distrl train ... | jq``: standard output is one JSON line; the progress lines (a terminal would get the bar)
    are on standard error, the budget's note first."""
    r = cli("train", "a2c", "--total-steps", "20000", "--set", "num_envs=8", "--set", "log_interval_s=0.05",
            "--run-dir", str(tmp_path / "r"), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.strip().splitlines()
    assert len(lines) == 1 and json.loads(lines[0])["env_steps"] >= 20000, r.stdout
    progress = [line for line in r.stderr.splitlines() if line.startswith("[a2c CartPole-v1]")]
    assert progress and "ETA" in progress[-1], r.stderr


def test_a_closed_pipe_ends_the_run_quietly(tmp_path):
    """``distrl train ... 2>&1 | head -1``: once the progress's reader is gone, the run goes on and ends as usual."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "distrl",
            "train",
            "a2c",
            "--total-steps",
            "60000",
            "--set",
            "num_envs=8",
            "--set",
            "log_interval_s=0.05",
            "--run-dir",
            str(tmp_path / "r"),
        ],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    proc.stderr.readline()  # the first progress line (on stderr: stdout is the summary's), then the reader leaves
    proc.stderr.close()
    out = proc.stdout.read()
    assert proc.wait(timeout=120) == 0, out
    assert json.loads(out.strip().splitlines()[-1])["env_steps"] >= 60000  # the summary still comes, alone
    assert json.loads((tmp_path / "r" / "summary.json").read_text())["env_steps"] >= 60000


def _under_a_terminal(args: list[str], cwd, columns: int = 80, timeout: float = 120.0) -> tuple[int, str]:
    """Run the CLI with its output on a pseudo-terminal of ``columns`` columns; (exit code, what it showed)."""
    import fcntl
    import pty
    import select
    import struct
    import termios

    pid, fd = pty.fork()
    if pid == 0:  # the child: a terminal of the given size
        os.chdir(cwd)
        os.environ["PYTHONPATH"] = str(ROOT)
        os.environ["COLUMNS"], os.environ["LINES"] = str(columns), "24"
        os.execv(sys.executable, [sys.executable, "-m", "distrl", *args])
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    out, deadline = b"", time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.5)
        if ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), out.decode(errors="replace")


def test_a_terminal_of_80_columns_gets_a_whole_bar_and_a_human_summary(tmp_path):
    code, shown = _under_a_terminal(["train", "a2c", "--total-steps", "60000", "--set", "num_envs=8",
                                     "--run-dir", str(tmp_path / "r")], tmp_path)
    assert code == 0, shown
    assert "…" not in shown  # nothing cut short to fit
    assert "sps" in shown and "ETA" in shown  # the bar's numbers
    assert "a2c on CartPole-v1 (inline)" in shown and "env steps/s" in shown and "run dir:" in shown
    assert '{"system"' not in shown  # the JSON stays in summary.json (and --json, and pipes)


def test_plot_writes_into_the_run_dir_and_eval_numbers_are_rounded(cli, tmp_path):
    run = tmp_path / "run"
    assert cli("train", "a2c", "--run-dir", str(run), *TINY, cwd=tmp_path).returncode == 0
    r = cli("plot", str(run), cwd=tmp_path)
    assert (
        r.returncode == 0
        and (run / "curves.png").read_bytes()[:4] == b"\x89PNG"
        and not (tmp_path / "curves.png").exists()
    )
    result = json.loads(cli("eval", str(run), "--episodes", "3", cwd=tmp_path).stdout.strip().splitlines()[-1])
    for key in ("mean_return", "std_return", "min_return", "max_return"):
        assert result[key] == round(result[key], 6)
    assert result["min_return"] <= result["mean_return"] <= result["max_return"]


def test_train_help_says_each_default_once():
    out = subprocess.run([sys.executable, "-m", "distrl", "train", "--help"], capture_output=True, text=True,
                         env={**os.environ, "COLUMNS": "400"}).stdout
    lines = [line for line in out.splitlines() if line.strip().startswith("--")]
    assert lines and all(line.count("default") <= 1 for line in lines), [
        line for line in lines if line.count("default") > 1
    ]
    assert "(default: CartPole-v1)" in out and "the system's budget that solves CartPole." in out


def test_the_program_exits_with_mains_code_after_freezing_the_collector(monkeypatch):
    """``distrl`` (the installed script and ``python -m distrl``) is ``console_main``: main's exit code, with every
    object moved out of the collector's sight first so the interpreter's exit skips scanning them."""
    from importlib.metadata import entry_points

    from distrl import cli

    assert [e.value for e in entry_points(group="console_scripts", name="distrl")] == ["distrl.cli:console_main"]
    calls = []
    monkeypatch.setattr(cli, "main", lambda: calls.append("main") or 2)
    monkeypatch.setattr(cli.gc, "freeze", lambda: calls.append("freeze"))
    with pytest.raises(SystemExit) as stop:
        cli.console_main()
    assert stop.value.code == 2 and calls == ["main", "freeze"]


def test_the_console_script_imports_a_users_env_module_from_the_working_directory(tmp_path):
    """``distrl train ... --env mycorridor:...`` run from the folder holding ``mycorridor.py`` finds it, on ``local``
    too (the actors' processes take the same import path), as ``python -m distrl`` would; a module that is nowhere
    is one line saying where distrl looks."""
    import shutil

    script = shutil.which("distrl")
    assert script is not None, "the distrl console script is not on PATH (pip install -e . installs it)"
    shutil.copy(ROOT / "tests" / "envs" / "corridor.py", tmp_path / "mycorridor.py")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    r = subprocess.run([script, "train", "appo", "--env", "mycorridor:DistrlCorridor-v0", "--total-steps", "2000",
                        "--quiet", "--json", "--set", "num_envs=4", "--set", "unroll_length=16", "--run-dir",
                        str(tmp_path / "r")], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=240)
    assert r.returncode == 0, r.stderr[-2000:]
    assert json.loads(r.stdout.strip().splitlines()[-1])["env_steps"] >= 2000
    r = subprocess.run([script, "train", "appo", "--env", "nosuchmodule:X-v0"], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "PYTHONPATH" in r.stderr


def test_the_human_summary_gives_policy_lag_in_updates_and_env_steps_of_data():
    """PPO's passes make every minibatch a weights version, so a lag in versions alone reads as a bug (1436.9); the
    summary says it in env steps of data too."""
    from distrl.cli import human_summary

    s = {"system": "appo", "env": "CartPole-v1", "runtime": "local", "env_steps": 262_144, "wall_s": 20.0,
         "sps": 13_107.0, "episode_return_mean": 480.0, "episodes": 900, "bottleneck": "learner-bound",
         "bottleneck_detail": "...", "learner_updates": 16_384, "policy_lag_mean": 1436.9,
         "policy_lag_env_steps": 1436.9 * 262_144 / 16_384, "actor_restarts": 0, "run_dir": "runs/x"}
    assert "policy lag: 1,436.9 updates (~22,990 env steps of data);" in human_summary(s)
    assert "policy lag: n/a;" in human_summary({**s, "policy_lag_mean": None, "policy_lag_env_steps": None})


def test_a_starved_learner_of_fixed_actors_gets_a_hint_to_autoscale():
    """A run whose learner waited for its actors says that autoscale=on would size it, where the system and the
    runtime can; an autoscaled run, a busy learner, a bottleneck other than the actors (SEED's server, a blocked
    pipeline), a run interrupted or too short for the autoscaler's windows, inline or a system without elastic actors
    get no such line."""
    from distrl.cli import human_summary

    s = {"system": "impala", "env": "distrl/SlowCartPole-v0", "runtime": "local", "env_steps": 20_000, "wall_s": 20.0,
         "sps": 1_000.0, "episode_return_mean": 20.0, "episodes": 900, "bottleneck": "actor-bound",
         "bottleneck_detail": "...", "learner_updates": 300, "policy_lag_mean": 1.0, "policy_lag_env_steps": 1024.0,
         "actor_restarts": 0, "run_dir": "runs/x", "learner_wait_frac": 0.75}
    assert "hint: the learner waited 75% of its time for data: --set autoscale=on" in human_summary(s)
    assert "hint:" in human_summary({**s, "learner_wait_frac": 0.21, "system": "seed", "runtime": "ray"})
    for quiet in ({"learner_wait_frac": 0.1}, {"learner_wait_frac": 0.2}, {"runtime": "inline"}, {"system": "ppo"},
                  {"learner_wait_frac": None}, {"autoscale": {"why": "8 actors", "changes": 3}},
                  {"bottleneck": "inference-bound"}, {"bottleneck": "pipeline-bound"}, {"interrupted": True},
                  {"wall_s": 5.0}):
        assert "hint:" not in human_summary({**s, **quiet}), quiet


def test_a_pattern_matching_two_runs_evaluates_both_and_plots_a_comparison_beside_them(cli, tmp_path):
    """The docs' ``distrl eval runs/ppo-CartPole-v1-*/`` and ``distrl plot runs/...-*/`` after a second run: one JSON
    line per run, and the comparison goes to ./compare.png, leaving each run's own curves.png as it was."""
    runs = [tmp_path / "runs" / f"a2c-{i}" for i in range(2)]
    for run in runs:
        assert cli("train", "a2c", "--run-dir", str(run), *TINY, cwd=tmp_path).returncode == 0
    r = cli("eval", *map(str, runs), "--episodes", "1", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    lines = [json.loads(line) for line in r.stdout.strip().splitlines()]
    assert [line["run_dir"] for line in lines] == list(map(str, runs)) and all(line["episodes"] == 1 for line in lines)
    assert cli("plot", str(runs[0]), cwd=tmp_path).returncode == 0
    own = (runs[0] / "curves.png").read_bytes()
    r = cli("plot", *map(str, runs), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "compare.png").read_bytes()[:4] == b"\x89PNG" and (runs[0] / "curves.png").read_bytes() == own


@pytest.mark.parametrize("content", [b"\xff\xfe\x00binary", b"", b"  \n"])
def test_a_token_file_that_holds_no_token_is_one_line(cli, tmp_path, content):
    bad = tmp_path / "token"
    bad.write_bytes(content)
    r = cli("join", "127.0.0.1:9", "--token-file", str(bad), "--timeout", "1", cwd=tmp_path)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "token" in r.stderr, r.stderr


def _processes_with(marker: str) -> list[str]:
    """The command lines of the processes whose environment holds ``marker`` (Linux's /proc)."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and marker.encode() in (proc / "environ").read_bytes():
                found.append((proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"))
        except OSError:  # gone meanwhile, or not ours to read
            continue
    return found


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs Linux's /proc")
def test_the_forkserver_of_a_local_run_ends_with_the_command(tmp_path):
    """The server that forks a local run's components ended on its own up to ~0.7 s after the command (once it read
    the end of its pipe), holding the command's stdout open meanwhile (``distrl train ... | cat`` waited for it);
    now the command stops it before it exits. (Its output goes to files here: a pipe would be read until the server
    closed it, which hides the difference.)"""
    import uuid

    marker = uuid.uuid4().hex
    env = dict(os.environ, PYTHONPATH=str(ROOT), DISTRL_TEST_MARK=marker)
    with open(tmp_path / "out", "w") as out, open(tmp_path / "err", "w") as err:
        proc = subprocess.Popen([sys.executable, "-m", "distrl", "train", "appo", "--runtime", "local",
                                 "--total-steps", "20000", "--quiet", "--run-dir", str(tmp_path / "r")],
                                cwd=tmp_path, env=env, stdout=out, stderr=err)
        assert proc.wait(timeout=240) == 0, (tmp_path / "err").read_text()
    assert [c for c in _processes_with(f"DISTRL_TEST_MARK={marker}") if "forkserver" in c] == []
