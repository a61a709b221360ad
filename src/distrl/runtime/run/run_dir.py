"""The run directory: resolved config, metrics, TensorBoard events, checkpoints and summary."""

from __future__ import annotations

import csv
import io
import json
import math
import os
import shutil
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import yaml

from distrl.errors import ConfigError


def default_run_dir(system: str, env_id: str) -> Path:
    safe_env = env_id.replace("/", "_").replace(":", "_")
    return Path("runs") / f"{system}-{safe_env}-{time.strftime('%Y%m%d-%H%M%S')}"


def prepare_run_dir(path: Path, *, resume: bool, force: bool, marker: str = "config.yaml") -> None:
    """Validate (and, with ``force``, clear) the run dir. Raises ConfigError before touching anything.
    ``marker`` is the file that makes a directory one of ours (a PBT population has ``pbt.json``)."""
    if resume and force:
        raise ConfigError("--resume and --force exclude each other: resume continues a run, force starts it anew")
    exists = path.exists() and any(path.iterdir()) if path.is_dir() else path.exists()
    if path.exists() and not path.is_dir():
        raise ConfigError(f"run dir '{path}' exists and is not a directory")
    if resume:
        if not (path / marker).is_file():
            raise ConfigError(f"cannot resume: '{path}' holds no run (no {marker})")
        for folder in ("checkpoints", "best"):  # a run writes into these: a file there would fail it mid-run
            if (path / folder).exists() and not (path / folder).is_dir():
                raise ConfigError(f"cannot resume: '{path / folder}' is a file, where the run keeps a folder; "
                                  "move it away")
        return
    if exists and not force:
        raise ConfigError(f"run dir '{path}' already exists; pass --resume to continue it or --force to start it anew")
    if exists and force and not (path / marker).is_file():  # --run-dir . --force must not wipe a project
        raise ConfigError(f"--force deletes only distrl run dirs, and '{path}' is not one (no {marker}); "
                          "choose another --run-dir")
    if exists and force:
        shutil.rmtree(path)
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe = path / ".distrl-write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as e:
        raise ConfigError(f"run dir '{path}' cannot be created or written: {e.strerror or e}") from None


def config_data(system: str, run_cfg, system_cfg) -> dict[str, Any]:
    """What ``config.yaml`` holds, as plain data (also what an experiment tracker gets as the run's config)."""
    return _plain({"system": system, "run": asdict(run_cfg), "system_config": asdict(system_cfg)})


def write_config(path: Path, system: str, run_cfg, system_cfg) -> None:
    text = yaml.safe_dump(config_data(system, run_cfg, system_cfg), sort_keys=False)
    tmp = path / ".config.yaml.tmp"
    tmp.write_text(text)
    tmp.replace(path / "config.yaml")


def read_config(path: Path) -> dict[str, Any]:
    """The run's saved settings, checked for shape (a mapping with ``system``, ``run``, ``system_config``);
    their values are coerced and validated later, like command-line ones."""
    file = Path(path) / "config.yaml"
    if not file.is_file():
        raise ConfigError(f"'{path}' is not a run dir (no config.yaml)")
    try:
        data = yaml.safe_load(file.read_text())
    except (yaml.YAMLError, UnicodeDecodeError, OSError) as e:
        raise ConfigError(f"'{file}' is damaged ({type(e).__name__}); restore it or start a new run") from None
    if not isinstance(data, dict) or not isinstance(data.get("system"), str) \
            or not isinstance(data.get("run"), dict) or not isinstance(data.get("system_config"), dict):
        raise ConfigError(f"'{file}' is damaged: it needs system, run: and system_config: sections")
    return data


def _plain(x):
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    return x


def write_json(path: Path, data) -> None:
    """Whole or not at all: a killed command leaves the file it had, never half of a new one."""
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(data, indent=1, allow_nan=False))
    os.replace(tmp, path)


def append_row(path: Path, row: list) -> None:
    """One CSV row at the end of ``path``; a last line left without its end (a process killed while writing it) is
    dropped first, so that the new row does not run on from it."""
    drop_torn_line(path)
    with path.open("a", newline="") as f:
        csv.writer(f).writerow(row)


def last_wall(*paths: Path) -> float:
    """The latest ``wall_s`` (first column) any of these CSVs holds, or 0: where a resumed league's or population's
    clock goes on from, so its rows keep one time line. A missing file, a torn or damaged last row count as none."""
    latest = 0.0
    for path in paths:
        try:
            lines = path.read_text().splitlines()
        except (FileNotFoundError, UnicodeDecodeError):
            continue
        for line in reversed(lines[1:]):
            try:
                value = float(next(csv.reader([line]))[0])
            except (ValueError, IndexError, csv.Error):
                continue
            if math.isfinite(value) and value >= 0:
                latest = max(latest, value)
            break
    return latest


def drop_torn_line(path: Path) -> None:
    """Cut a last line left without its end (a writer killed mid-row) off ``path``, if it has one."""
    try:
        f = path.open("rb+")
    except FileNotFoundError:
        return
    with f:
        end = f.seek(0, os.SEEK_END)
        if end == 0:
            return
        f.seek(end - 1)
        if f.read(1) == b"\n":
            return
        start = end
        while start > 0:  # back to the end of the last whole line, a block at a time
            start = max(0, start - (1 << 16))
            f.seek(start)
            cut = f.read(end - start).rfind(b"\n")
            if cut >= 0:
                f.truncate(start + cut + 1)
                return
        f.truncate(0)


def append_record(path: Path, record: dict[str, Any]) -> None:
    """A row of named values appended to a CSV whose header names them. A file written by an older version, whose
    header lacks some of them, is rewritten once with them added (its rows blank there), so that a resumed run's
    rows stay under the right names; a row of such a file that is as long as ``record`` and longer than its header
    (appended in ``record``'s order under the old header, as autoscale.csv's were before this) is put under its names.
    """
    header = []
    if path.is_file():
        with path.open(newline="") as f:
            header = next((r for r in csv.reader(f) if r), [])
    if not header:
        with path.open("w", newline="") as f:
            csv.writer(f).writerow(list(record))
        header = list(record)
    elif new := [k for k in record if k not in header]:
        with path.open(newline="") as f:
            rows = [r for r in csv.reader(f) if r][1:]
        old, header = header, header + new
        tmp = path.with_name(path.name + ".tmp")
        with tmp.open("w", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(header)
            for r in rows:
                named = dict(zip(record, r)) if len(r) == len(record) > len(old) else dict(zip(old, r))
                writer.writerow([named.get(k, "") for k in header])
        tmp.replace(path)
    append_row(path, [record.get(k, "") for k in header])


def read_rows(path: Path) -> list[dict]:
    """The rows of a CSV file with a header, each a dict; a last line without its end (a writer killed mid-row) and
    a row of fewer or more fields than the header are left out."""
    if not path.is_file():
        return []
    with path.open(newline="") as f:
        text = f.read()
    if not text.endswith("\n"):
        text = text[:text.rfind("\n") + 1]
    return [r for r in csv.DictReader(io.StringIO(text, newline="")) if None not in r and None not in r.values()]


def read_json_object(path: Path, what: str = "") -> dict:
    """A JSON object a command resumes from (``what`` says what it is), or one line saying why not."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        raise ConfigError(
            f"cannot resume: '{path.parent}' holds no readable {path.name}" + (f" ({what})" if what else "")
        ) from None
    if not isinstance(data, dict):
        raise ConfigError(f"cannot resume: {path} is not a mapping")
    return data
