"""Experiment trackers get what the run dir gets: every metrics row at its env step, the settings, the summary and
the curves; offline (W&B) or in a file store (MLflow), so no test needs a network; a resumed run continues the same
tracker run; a missing package is one line before anything is written; a tracker that fails never stops training."""

import csv
import json

import pytest

import distrl
from distrl.cli import main
from tests.runtime.run.wandb_log import history, records

SETTINGS = dict(env="CartPole-v1", runtime="inline", progress=False, log_interval_s=0.05, num_envs=8)


def _rows(run_dir):
    with (run_dir / "metrics.csv").open() as f:
        return list(csv.DictReader(f))


def test_a_run_logs_to_an_offline_wandb_run_and_a_resume_continues_it(tmp_path, monkeypatch):
    monkeypatch.delenv("WANDB_MODE", raising=False)
    run_dir = tmp_path / "run"
    distrl.train("a2c", total_steps=4000, run_dir=str(run_dir), tracker="wandb", tracker_project="tests", **SETTINGS)
    saved = json.loads((run_dir / "tracker.json").read_text())
    assert saved["tracker"] == "wandb"
    (first,) = (run_dir / "wandb").glob(f"offline-run-*-{saved['id']}")
    logged = history(next(first.glob("*.wandb")))
    rows = _rows(run_dir)
    assert [int(h["env_steps"]) for h in logged] == [int(r["env_steps"]) for r in rows]
    assert {"sps", "learner_wait_frac", "policy_lag_mean"} <= set(logged[0])
    logs = records(next(first.glob("*.wandb")))
    kinds = {r.WhichOneof("record_type"): r for r in logs}
    assert kinds["run"].run.project == "tests"
    config = {i.key: i.value_json for i in kinds["run"].run.config.update}
    assert json.loads(config["system"]) == "a2c" and json.loads(config["run"])["total_steps"] == 4000
    summary = {i.key: json.loads(i.value_json) for r in logs if r.WhichOneof("record_type") == "summary"
               for i in r.summary.update}
    written = json.loads((run_dir / "summary.json").read_text())
    assert summary["env_steps"] == written["env_steps"] and summary["system"] == "a2c"
    assert list(first.glob("files/media/images/curves_*.png")) and (first / "files" / "metrics.csv").is_file()
    assert kinds["exit"].exit.exit_code == 0

    distrl.train("a2c", total_steps=8000, run_dir=str(run_dir), resume=True, tracker="wandb", **SETTINGS)
    assert json.loads((run_dir / "tracker.json").read_text())["id"] == saved["id"]
    assert len(list((run_dir / "wandb").glob(f"offline-run-*-{saved['id']}"))) == 2  # one per session, one run id


def test_a_run_logs_to_an_mlflow_file_store_in_its_run_dir_and_a_resume_continues_it(tmp_path, monkeypatch):
    from mlflow.tracking import MlflowClient

    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    run_dir = tmp_path / "run"
    distrl.train("a2c", total_steps=4000, run_dir=str(run_dir), tracker="mlflow", **SETTINGS)
    run_id = json.loads((run_dir / "tracker.json").read_text())["id"]
    client = MlflowClient(tracking_uri=(run_dir / "mlruns").resolve().as_uri())
    run = client.get_run(run_id)
    assert run.info.status == "FINISHED" and run.data.params["system"] == "a2c"
    assert run.data.params["run.total_steps"] == "4000"
    rows = _rows(run_dir)
    steps = [m.step for m in client.get_metric_history(run_id, "sps")]
    assert steps == [int(r["env_steps"]) for r in rows if r["sps"]]
    assert {a.path for a in client.list_artifacts(run_id)} >= {"summary.json", "curves.png", "metrics.csv"}

    distrl.train("a2c", total_steps=8000, run_dir=str(run_dir), resume=True, tracker="mlflow", **SETTINGS)
    assert json.loads((run_dir / "tracker.json").read_text())["id"] == run_id
    assert client.get_run(run_id).info.status == "FINISHED"
    assert len(client.get_metric_history(run_id, "env_steps")) == len(_rows(run_dir))


def test_a_missing_tracker_package_is_one_line_and_nothing_is_written(tmp_path, monkeypatch, capsys):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "wandb" else real(name, *a))
    code = main(["train", "a2c", "--run-dir", str(tmp_path / "run"), "--set", "tracker=wandb"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and "\n" not in err and "pip install 'distrl[wandb]'" in err
    assert not (tmp_path / "run").exists()


def test_an_unknown_tracker_is_one_line_naming_the_valid_ones(tmp_path, capsys):
    assert main(["train", "a2c", "--run-dir", str(tmp_path / "run"), "--set", "tracker=neptune"]) == 2
    err = capsys.readouterr().err
    assert "wandb" in err and "mlflow" in err and not (tmp_path / "run").exists()


def test_a_tracker_that_fails_mid_run_says_so_once_and_training_goes_on(tmp_path, monkeypatch, capsys):
    from distrl.runtime.run import trackers

    def broken(self, numbers, step):
        raise ConnectionError("server gone")

    monkeypatch.setattr(trackers.MlflowObserver, "_log", broken)
    summary = distrl.train("a2c", total_steps=4000, run_dir=str(tmp_path / "run"), tracker="mlflow", **SETTINGS)
    err = capsys.readouterr().err
    assert summary["env_steps"] >= 4000 and (tmp_path / "run" / "summary.json").is_file()
    assert err.count("mlflow tracker: logging a row failed (ConnectionError: server gone)") == 1
    assert len(_rows(tmp_path / "run")) >= 1


@pytest.mark.parametrize("tracker", ["wandb", "mlflow"])
def test_a_run_that_fails_marks_its_tracker_run_failed(tracker, tmp_path, monkeypatch):
    monkeypatch.delenv("WANDB_MODE", raising=False)
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    from distrl.runtime.run.trackers import tracker_observer

    observer = tracker_observer(tracker, tmp_path, {"system": "a2c"})
    observer.on_start(None)
    observer.on_row(None, {"env_steps": 10, "sps": 5.0, "note": "text is not logged", "nan": float("nan")})
    observer.on_close(None, None)
    assert not observer.failed
    run_id = json.loads((tmp_path / "tracker.json").read_text())["id"]
    if tracker == "mlflow":
        from mlflow.tracking import MlflowClient

        run = MlflowClient(tracking_uri=(tmp_path / "mlruns").resolve().as_uri()).get_run(run_id)
        assert run.info.status == "FAILED" and run.data.metrics == {"env_steps": 10.0, "sps": 5.0}
    else:
        (log,) = (tmp_path / "wandb").glob(f"offline-run-*-{run_id}/*.wandb")
        exit_record = [r for r in records(log) if r.WhichOneof("record_type") == "exit"]
        assert exit_record[0].exit.exit_code == 1
        assert set(history(log)[0]) >= {"env_steps", "sps"} and "note" not in history(log)[0]


def test_a_run_that_fails_before_it_starts_says_only_why(tmp_path, capsys):
    """No tracker line on top of the real error: a tracker that never started has nothing to finish."""
    assert main(["train", "a2c", "--run-dir", str(tmp_path / "run"), "--resume", "--set", "tracker=mlflow"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "tracker" not in err


def test_a_slow_tracker_never_holds_the_trainer_and_gets_every_row_by_the_end(tmp_path, monkeypatch):
    """Rows leave from the tracker's own thread: on_row returns while the tracker is stuck, and close waits for them."""
    import threading

    from distrl.runtime.run import trackers

    release, logged = threading.Event(), []

    def stuck(self, numbers, step):
        release.wait(30)
        logged.append(step)

    monkeypatch.setattr(trackers.MlflowObserver, "_log", stuck)
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    observer = trackers.tracker_observer("mlflow", tmp_path, {"system": "a2c"})
    observer.on_start(None)
    for step in range(5):
        observer.on_row(None, {"env_steps": step, "sps": 1.0})  # returns at once: the tracker is stuck
    assert logged == []
    release.set()
    observer.on_close(None, {"env_steps": 4})
    assert logged == [0, 1, 2, 3, 4] and not observer.failed


def test_rows_a_hung_tracker_never_took_by_the_close_are_said_to_be_in_the_run_dir_only(tmp_path, monkeypatch,
                                                                                         capsys):
    import threading

    from distrl.runtime.run import trackers

    release = threading.Event()
    monkeypatch.setattr(trackers.MlflowObserver, "_log", lambda self, numbers, step: release.wait(30))
    monkeypatch.setattr(trackers, "CLOSE_TIMEOUT_S", 0.2)
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    observer = trackers.tracker_observer("mlflow", tmp_path, {"system": "a2c"})
    observer.on_start(None)
    for step in range(4):
        observer.on_row(None, {"env_steps": step, "sps": 1.0})
    try:
        observer.on_close(None, {"env_steps": 3})
    finally:
        release.set()
    err = capsys.readouterr().err
    assert "mlflow tracker: " in err and "rows still queued after 0.2 s are in the run dir only (metrics.csv)" in err


def test_a_hung_tracker_with_a_full_queue_does_not_hold_the_close(tmp_path, monkeypatch, capsys):
    import threading

    from distrl.runtime.run import trackers

    release = threading.Event()
    monkeypatch.setattr(trackers.MlflowObserver, "_log", lambda self, numbers, step: release.wait(30))
    monkeypatch.setattr(trackers, "CLOSE_TIMEOUT_S", 0.2)
    monkeypatch.setattr(trackers, "ROWS_QUEUED", 2)
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    observer = trackers.tracker_observer("mlflow", tmp_path, {"system": "a2c"})
    observer.on_start(None)
    for step in range(6):  # one in the tracker, two queued, three beyond: in the run dir only
        observer.on_row(None, {"env_steps": step, "sps": 1.0})
    try:
        observer.on_close(None, {"env_steps": 5})  # returns: the end marker does not wait on the full queue forever
    finally:
        release.set()
    assert "2 rows still queued after 0.2 s are in the run dir only" in capsys.readouterr().err
