import torch

from distrl.runtime.run.checkpoint import (
    latest_checkpoint,
    list_checkpoints,
    load_checkpoint,
    save_checkpoint,
)


def _trained_pair():
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    for _ in range(3):
        opt.zero_grad()
        model(torch.randn(5, 3)).pow(2).sum().backward()
        opt.step()
    return model, opt


def test_round_trip_weights_optimizer_counters(tmp_path):
    model, opt = _trained_pair()
    path = save_checkpoint(tmp_path, 123, {"model": model}, {"optimizer": opt}, {"env_steps": 123, "note": [1, 2]})
    assert (path / "model.safetensors").is_file() and not list(tmp_path.glob(".tmp*"))
    model2, opt2 = _trained_pair()
    counters = load_checkpoint(path, {"model": model2}, {"optimizer": opt2})
    assert counters == {"env_steps": 123, "note": [1, 2]}
    for a, b in zip(model.state_dict().values(), model2.state_dict().values()):
        torch.testing.assert_close(a, b, rtol=0, atol=0)
    s1, s2 = opt.state_dict(), opt2.state_dict()
    for pid in s1["state"]:
        for k in s1["state"][pid]:
            torch.testing.assert_close(torch.as_tensor(s1["state"][pid][k]), torch.as_tensor(s2["state"][pid][k]))
    # the optimizer really continues: one more identical step gives identical weights
    x = torch.randn(5, 3)
    for m, o in ((model, opt), (model2, opt2)):
        o.zero_grad()
        m(x).pow(2).sum().backward()
        o.step()
    for a, b in zip(model.parameters(), model2.parameters()):
        torch.testing.assert_close(a, b)


def test_keeps_only_newest(tmp_path):
    model, opt = _trained_pair()
    for step in (10, 20, 30, 40):
        save_checkpoint(tmp_path, step, {"model": model}, {"optimizer": opt}, {}, keep=2)
    assert [p.name for p in list_checkpoints(tmp_path)] == ["step-000000000030", "step-000000000040"]
    assert latest_checkpoint(tmp_path).name.endswith("40")


def test_checkpoint_holds_no_pickle(tmp_path):
    model, opt = _trained_pair()
    path = save_checkpoint(tmp_path, 1, {"model": model}, {"optimizer": opt}, {})
    for f in path.iterdir():
        assert f.suffix in (".safetensors", ".json")


def test_a_full_disk_at_a_checkpoint_keeps_the_previous_one_and_the_run_ends_with_its_summary(tmp_path, monkeypatch,
                                                                                               capsys):
    """Every checkpoint after the first fails to write (as on a full disk): the run goes on, ends with a
    summary.json that says so, the first checkpoint is whole and loadable, and no half-written folder is left."""
    import errno
    import json

    import distrl
    from distrl.runtime.run import checkpoint as ckpt

    real, calls = ckpt.save_file, {"n": 0}

    def full_after_the_first(tensors, path, *a, **k):
        calls["n"] += 1
        if calls["n"] > 2:  # the first checkpoint's model and optimizer files, then the disk is full
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(tensors, path, *a, **k)

    monkeypatch.setattr(ckpt, "save_file", full_after_the_first)
    run = tmp_path / "r"
    s = distrl.train("a2c", env="CartPole-v1", total_steps=6000, num_envs=8, run_dir=str(run),
                     checkpoint_interval_s=1e-6, progress=False)
    assert "No space left on device" in s["checkpoint_error"]
    assert json.loads((run / "summary.json").read_text())["env_steps"] == s["env_steps"] >= 6000
    assert "was not written (No space left on device)" in capsys.readouterr().err
    kept = ckpt.list_checkpoints(run / "checkpoints")
    assert len(kept) == 1 and ckpt.latest_checkpoint(run / "checkpoints") == kept[0]
    assert not list((run / "checkpoints").glob(".tmp-*"))


def test_a_partial_checkpoint_left_by_a_killed_writer_is_removed(tmp_path):
    import subprocess
    import sys

    import torch

    from distrl.runtime.run import checkpoint as ckpt

    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    stale = tmp_path / f".tmp-step-000000000100-{int(gone.stdout)}"  # its writer has exited
    stale.mkdir()
    (stale / "model.safetensors").write_bytes(b"half")
    ckpt.save_checkpoint(tmp_path, 200, {"model": torch.nn.Linear(2, 2)}, {}, {"env_steps": 200})
    assert not stale.exists() and [p.name for p in ckpt.list_checkpoints(tmp_path)] == ["step-000000000200"]
