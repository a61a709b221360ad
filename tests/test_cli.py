"""The real CLI in a subprocess: exit codes, one-line errors, run dirs, eval JSON, plot, list."""

import json

import pytest

TINY = ["--total-steps", "5000", "--quiet", "--set", "num_envs=8"]


@pytest.mark.parametrize("args,fragment", [
    (["train", "a2cc"], "unknown system 'a2cc'; did you mean 'a2c'?"),
    (["train", "a2c", "--env", "CartPol-v1"], "did you mean 'CartPole-v1'?"),
    (["train", "a2c", "--set", "lrr=0.1"], "unknown setting 'lrr'; did you mean 'lr'?"),
    (["train", "a2c", "--set", "lr=-0.1"], "setting 'lr' must be > 0.0"),
    (["train", "a2c", "--set", "num_envs=0"], "setting 'num_envs' must be >= 1"),
    (["train", "a2c", "--total-steps", "ten"], "setting 'total_steps' must be of type int"),
    (["train", "a2c", "--runtime", "cluster"], "setting 'runtime' must be one of inline, local, ray"),
    (["train", "a2c", "--runtime", "local"], "runtime 'local' is not supported by a2c"),
    (["eval", "/nonexistent/run"], "is not a run dir"),
    (["frobnicate"], "invalid choice"),
    (["train", "seed", "--env", "CartPole-v1", "--set", "bind=nowhere"], "bind 'nowhere' is not HOST:PORT"),
    (["join", "nowhere"], "join address 'nowhere' is not HOST:PORT"),
    (["join", "127.0.0.1:9", "--timeout", "0.5"], "no SEED server answered at 127.0.0.1:9"),
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
    for key in ("system", "env", "env_steps", "wall_s", "sps", "episode_return_mean", "learner_wait_frac", "policy_lag_mean", "bottleneck"):
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
    for word in ("a2c", "impala", "total_steps", "num_envs", "unroll_length", "Learning rate"):
        assert word in r.stdout


def test_eval_video_writes_a_gif(cli, tmp_path):
    run = tmp_path / "run"
    assert cli("train", "a2c", "--run-dir", str(run), *TINY, cwd=tmp_path).returncode == 0
    r = cli("eval", str(run), "--episodes", "1", "--video", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    gif = run / "videos" / "eval-episode-0.gif"
    assert gif.read_bytes()[:3] == b"GIF" and json.loads(r.stdout.strip().splitlines()[-1])["video"] == str(gif)
