"""Experiment trackers as observers: Weights & Biases and MLflow receive what the run dir receives.

Each metrics row is logged at its env step (the numbers only, as TensorBoard gets them), the run's settings once as
the tracker's config or params, and at the end the summary and the learning curves (``curves.png``, as ``distrl
plot`` draws them) with ``metrics.csv``. Nothing here needs a network by default: W&B runs offline unless
``WANDB_MODE`` says otherwise (``wandb sync RUN_DIR/wandb/offline-run-*`` uploads later), and MLflow writes a file
store in the run dir unless ``tracker_uri`` (or ``MLFLOW_TRACKING_URI``) names a server. The tracker's run id is kept
in ``RUN_DIR/tracker.json``, so ``--resume`` continues the same tracker run. Rows leave from a thread of their own
(a slow server never holds the trainer; a thousand rows behind, it misses rows, which the run dir keeps). A tracker
that fails mid-run (a full disk, a server gone) says so once and the training goes on: the run dir remains the
record.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import queue
import secrets
import sys
import threading
from pathlib import Path
from typing import Any

from distrl.errors import ConfigError
from distrl.runtime.run.observers import Observer

TRACKERS = ("none", "wandb", "mlflow")
ROWS_QUEUED = 1000  # rows waiting for a slow tracker; beyond, a row goes to the run dir only
CLOSE_TIMEOUT_S = 60.0  # at the end, how long the rows still queued may take to leave
PACKAGES = {"wandb": "wandb", "mlflow": "mlflow"}  # tracker -> the module it imports (extra of the same name)


def check_tracker(name: str) -> None:
    """Before anything is written: the tracker is known and its package importable."""
    if name not in TRACKERS:
        raise ConfigError(f"tracker must be one of {', '.join(TRACKERS)}; got {name!r}")
    if name != "none" and importlib.util.find_spec(PACKAGES[name]) is None:
        raise ConfigError(f"tracker={name} needs the {PACKAGES[name]} package: pip install 'distrl[{name}]'")


def _numbers(row: dict) -> dict[str, float]:
    return {k: float(v) for k, v in row.items()
            if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)}


def _flat(config: dict, prefix: str = "") -> dict[str, Any]:
    out = {}
    for key, value in config.items():
        if isinstance(value, dict):
            out.update(_flat(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


class TrackerObserver(Observer):
    """The shared part: the saved run id, the failure rule and the end-of-run files; subclasses talk to one tracker."""

    name = ""

    def __init__(self, run_dir: Path, config: dict, project: str | None, uri: str | None):
        self.run_dir, self.config = Path(run_dir), config
        self.project, self.uri = project or "distrl", uri
        self.started = self.failed = False

    def _saved_id(self) -> str | None:
        try:
            saved = json.loads((self.run_dir / "tracker.json").read_text())
        except (OSError, ValueError):
            return None
        return saved.get("id") if isinstance(saved, dict) and saved.get("tracker") == self.name else None

    def _save_id(self, run_id: str) -> None:
        (self.run_dir / "tracker.json").write_text(json.dumps({"tracker": self.name, "id": run_id}) + "\n")

    def _guard(self, what: str, call, *args) -> bool:
        try:
            call(*args)
            return True
        except Exception as e:  # the tracker is an extra: the run dir stays the record, the run goes on
            first = str(e).strip().splitlines()[0][:200] if str(e).strip() else ""
            print(f"distrl: {self.name} tracker: {what} failed ({type(e).__name__}: {first}); "
                  "training goes on, logging to the run dir only", file=sys.stderr, flush=True)
            return False

    def _curves(self) -> Path | None:
        from distrl.plotting import plot_runs

        if not (self.run_dir / "metrics.csv").is_file():
            return None
        return Path(plot_runs([str(self.run_dir)], str(self.run_dir / "curves.png")))

    def on_start(self, trainer) -> None:
        self.started = self._guard("starting", self._start)
        if self.started:  # rows leave from a thread of their own: a slow tracker server never holds the trainer
            self._rows: queue.Queue = queue.Queue(maxsize=ROWS_QUEUED)
            self._sender = threading.Thread(target=self._send_rows, name=f"distrl-{self.name}", daemon=True)
            self._sender.start()

    def _send_rows(self) -> None:
        while (item := self._rows.get()) is not None:
            if not self.failed:  # after one failure the rows go to the run dir only
                self.failed = not self._guard("logging a row", self._log, *item)

    def on_row(self, trainer, row: dict) -> None:
        if self.started and not self.failed:
            try:
                self._rows.put_nowait((_numbers(row), int(row["env_steps"])))
            except queue.Full:  # the tracker is this far behind: the row stays in the run dir only
                pass

    def on_close(self, trainer, summary: dict | None) -> None:
        if self.started:  # finished even after a failed row: the tracker's run is not left running
            try:
                self._rows.put(None, timeout=CLOSE_TIMEOUT_S)  # a hung tracker with a full queue: not forever
                self._sender.join(timeout=CLOSE_TIMEOUT_S)
            except queue.Full:
                pass
            if self._sender.is_alive():  # said, not lost in silence: the run dir has every row
                print(f"distrl: {self.name} tracker: {self._rows.qsize()} rows still queued after "
                      f"{CLOSE_TIMEOUT_S:g} s are in the run dir only (metrics.csv)", file=sys.stderr, flush=True)
            self._guard("finishing", self._finish, summary)

    def _start(self) -> None: ...

    def _log(self, numbers: dict[str, float], step: int) -> None: ...

    def _finish(self, summary: dict | None) -> None: ...


class WandbObserver(TrackerObserver):
    name = "wandb"

    def _start(self) -> None:
        import wandb

        mode = os.environ.get("WANDB_MODE") or "offline"  # no network unless the user asks for it
        self.run = wandb.init(project=self.project, dir=str(self.run_dir), name=self.run_dir.name,
                              config=self.config, id=self._saved_id() or secrets.token_hex(8), resume="allow",
                              reinit="create_new", mode=mode, settings=wandb.Settings(console="off", silent=True))
        self._save_id(self.run.id)

    def _log(self, numbers: dict[str, float], step: int) -> None:
        self.run.log(numbers, step=step)

    def _finish(self, summary: dict | None) -> None:
        import wandb

        if summary is not None:
            self.run.summary.update(summary)
            curves = self._curves()
            if curves is not None:
                self.run.log({"curves": wandb.Image(str(curves))}, step=int(summary.get("env_steps") or 0))
            self.run.save(str(self.run_dir / "metrics.csv"), base_path=str(self.run_dir), policy="now")
        self.run.finish(exit_code=0 if summary is not None else 1)


class MlflowObserver(TrackerObserver):
    name = "mlflow"

    def _start(self) -> None:
        from mlflow.entities import Param
        from mlflow.tracking import MlflowClient

        uri = self.uri or os.environ.get("MLFLOW_TRACKING_URI") or None
        if uri is None:  # MLflow's file store, kept in the run dir (MLflow 3 asks for this opt-in, read from the env)
            os.environ.setdefault("MLFLOW_ALLOW_FILE_STORE", "true")
            uri = (self.run_dir / "mlruns").resolve().as_uri()
        self.client = MlflowClient(tracking_uri=uri)
        run_id = self._saved_id()
        if run_id is None:
            experiment = self.client.get_experiment_by_name(self.project)
            experiment_id = experiment.experiment_id if experiment else self.client.create_experiment(self.project)
            run_id = self.client.create_run(experiment_id, run_name=self.run_dir.name).info.run_id
            params = [Param(k, str(v)[:6000]) for k, v in _flat(self.config).items()]
            for i in range(0, len(params), 100):  # MLflow takes at most 100 params per batch
                self.client.log_batch(run_id, params=params[i:i + 100])
        else:
            self.client.update_run(run_id, status="RUNNING")
        self.run_id = run_id
        self._save_id(run_id)

    def _log(self, numbers: dict[str, float], step: int) -> None:
        import time

        from mlflow.entities import Metric

        now = int(time.time() * 1000)
        self.client.log_batch(self.run_id, metrics=[Metric(k, v, now, step) for k, v in numbers.items()])

    def _finish(self, summary: dict | None) -> None:
        if summary is not None:
            self.client.log_dict(self.run_id, summary, "summary.json")
            curves = self._curves()
            if curves is not None:
                self.client.log_artifact(self.run_id, str(curves))
            self.client.log_artifact(self.run_id, str(self.run_dir / "metrics.csv"))
        self.client.set_terminated(self.run_id, status="FINISHED" if summary is not None else "FAILED")


def tracker_observer(name: str, run_dir: Path, config: dict, project: str | None = None,
                     uri: str | None = None) -> TrackerObserver | None:
    """The observer for ``tracker=name`` (None for ``none``)."""
    check_tracker(name)
    if name == "none":
        return None
    return {"wandb": WandbObserver, "mlflow": MlflowObserver}[name](run_dir, config, project, uri)
