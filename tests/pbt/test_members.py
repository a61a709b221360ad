"""Exploit copies weights and optimizer statistics in memory, verified at the target; a bad copy is refused."""

import pytest
import torch

from distrl.api import make_trainer
from distrl.pbt.members import TrainerMember, state_checksum

SMALL = {
    "a2c": {"num_envs": 8, "unroll_length": 32},
    "impala": {"num_actors": 1},
    "apex-dqn": {"num_actors": 1, "min_replay": 200},
}


def member(system, run_dir, seed):
    m = TrainerMember(lambda resume: make_trainer(system, env="CartPole-v1", runtime="inline", run_dir=str(run_dir),
                                                  seed=seed, total_steps=100_000, **SMALL[system]), False)
    m.start()
    return m


@pytest.mark.parametrize("system", ["a2c", "impala", "apex-dqn"])
def test_exploit_copies_weights_and_optimizer_state_and_verifies_them(system, tmp_path):
    source, target = member(system, tmp_path / "a", 0), member(system, tmp_path / "b", 1)
    try:
        report = source.step(2_000)
        target.step(1_000)
        assert report["env_steps"] >= 2_000 and set(report) >= {"score", "hyperparameters", "done"}
        snapshot = source.snapshot()
        lr = snapshot["state"]["hyperparameters"]["lr"] * 1.2
        checksum = target.load(snapshot, {"lr": lr})
        assert checksum == snapshot["checksum"]
        mine = target.trainer.state()
        for name, tensors in snapshot["state"]["modules"].items():
            for key, value in tensors.items():
                torch.testing.assert_close(mine["modules"][name][key], value, rtol=0, atol=0)
        for name, opt in snapshot["state"]["optimizers"].items():
            assert opt["state"], "the source's optimizer has statistics to copy"
            for slot, stats in opt["state"].items():
                for key, value in stats.items():
                    torch.testing.assert_close(mine["optimizers"][name]["state"][slot][key], value, rtol=0, atol=0)
        assert target.trainer.hyperparameters["lr"] == pytest.approx(lr)
        target.step(1_000)  # trains on from the copy; the source's snapshot is untouched by it
        assert state_checksum(source.snapshot()["state"]) == snapshot["checksum"]
        bad = {"state": snapshot["state"], "checksum": "0" * 64}
        with pytest.raises(RuntimeError, match="differs from its source"):
            target.load(bad, {"lr": lr})
    finally:
        source.close()
        target.close()


def test_the_checksum_sees_every_tensor_but_not_the_learning_rate():
    model = torch.nn.Linear(2, 2)
    opt = torch.optim.Adam(model.parameters(), lr=0.1)
    model(torch.ones(1, 2)).sum().backward()
    opt.step()
    state = {"modules": {"model": model.state_dict()}, "optimizers": {"optimizer": opt.state_dict()}}
    base = state_checksum(state)
    opt.param_groups[0]["lr"] = 0.5
    assert state_checksum({**state, "optimizers": {"optimizer": opt.state_dict()}}) == base
    with torch.no_grad():
        model.bias[0] += 1e-6
    assert state_checksum({**state, "modules": {"model": model.state_dict()}}) != base
    opt.state[model.weight]["exp_avg"][0, 0] += 1e-6
    assert state_checksum({**state, "optimizers": {"optimizer": opt.state_dict()}}) != base
