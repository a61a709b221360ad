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
