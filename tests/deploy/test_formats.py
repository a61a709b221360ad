"""``distrl export``'s files: written whole or not at all, checked against the policy, carrying their metadata; bad
input is one line and exit code 2, and leaves the run dir as it was."""

import numpy as np
import onnx
import pytest
import torch

import distrl
from distrl.cli import main
from distrl.deploy import acting_graph, write
from distrl.errors import ConfigError


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    path = tmp_path_factory.mktemp("export") / "dqn"
    distrl.train("apex-dqn", env="CartPole-v1", runtime="inline", total_steps=1000, run_dir=str(path), progress=False)
    return path


def _files(path):
    return sorted((p.relative_to(path), p.stat().st_size) for p in path.rglob("*") if p.is_file())


def test_the_cli_writes_into_the_run_dir_by_default_and_says_what_it_wrote(run_dir, capsys):
    assert main(["export", str(run_dir)]) == 0
    import json

    out = json.loads(capsys.readouterr().out)
    assert out["out"] == str(run_dir / "policy.onnx") and out["outputs"] == ["action", "q"]
    assert out["inputs"] == {"obs": [["batch", 4], "float32"]}
    meta = {p.key: p.value for p in onnx.load(out["out"]).metadata_props}
    assert meta["distrl.system"] == "apex-dqn" and meta["distrl.env"] == "CartPole-v1"
    assert meta["distrl.head"] == "greedy" and meta["distrl.recurrent"] == "false"
    (run_dir / "policy.onnx").unlink()


@pytest.mark.parametrize("args, says", [
    (["--format", "tflite"], "invalid choice: 'tflite'"),
    (["--head", "sample"], "acts greedily once trained"),
    (["--out", "{missing}/p.onnx"], "does not exist"),
    (["--out", "{run}"], "is a folder"),
])
def test_bad_input_is_one_line_exit_2_and_the_run_dir_unchanged(run_dir, capsys, args, says):
    before = _files(run_dir)
    args = [a.format(run=run_dir, missing=run_dir / "nowhere") for a in args]
    assert main(["export", str(run_dir), *args]) == 2
    err = capsys.readouterr().err.strip()
    assert says in err and "\n" not in err and "Traceback" not in err
    assert _files(run_dir) == before


def test_a_run_dir_without_a_policy_is_one_line(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    assert main(["export", str(tmp_path / "empty")]) == 2
    assert "not a run dir" in capsys.readouterr().err


def test_an_existing_file_is_replaced_only_with_force(run_dir, tmp_path, capsys):
    out = tmp_path / "p.pt"
    out.write_bytes(b"keep me")
    assert main(["export", str(run_dir), "--format", "torchscript", "--out", str(out)]) == 2
    assert "--force" in capsys.readouterr().err and out.read_bytes() == b"keep me"
    assert main(["export", str(run_dir), "--format", "torchscript", "--out", str(out), "--force"]) == 0
    assert out.read_bytes() != b"keep me"


def test_a_graph_that_does_not_reproduce_the_policy_is_refused_and_nothing_is_written(run_dir, tmp_path,
                                                                                       monkeypatch):
    """The written file is run before it appears: an exporter's mistake fails the command."""
    graph = acting_graph(distrl.load_policy(run_dir))
    from distrl.deploy import formats

    real = formats.run_exported
    monkeypatch.setattr(formats, "run_exported", lambda *a: [x + 1 if x.dtype.kind == "f" else x for x in real(*a)])
    with pytest.raises(RuntimeError, match="'q' differs"):
        write(graph, "onnx", tmp_path / "wrong.onnx")
    assert list(tmp_path.iterdir()) == []


def test_a_batch_size_frozen_into_the_graph_is_caught(run_dir, tmp_path):
    """The check runs another batch size than the export saw: a traced constant shape fails it."""
    graph = acting_graph(distrl.load_policy(run_dir))

    class Frozen(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, obs):
            action, q = self.inner(obs)
            return action, q + torch.zeros(int(obs.shape[0]), 1)  # int(): the trace keeps the example's 2

    graph.module = Frozen(graph.module)
    with pytest.raises(RuntimeError, match="batch of 3"):
        write(graph, "torchscript", tmp_path / "frozen.pt")
    assert not (tmp_path / "frozen.pt").exists()


def test_missing_packages_are_named_with_the_extra(run_dir, monkeypatch, tmp_path):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "onnxscript" else real(name, *a))
    with pytest.raises(ConfigError, match=r"needs onnxscript: pip install 'distrl\[export\]'"):
        distrl.export(run_dir, "onnx", out=tmp_path / "p.onnx")
    assert not np.any([p.suffix == ".onnx" for p in tmp_path.iterdir()])
