"""Where a learner computes (models/device.py): device names, staging batches, bf16 layers, placing a learner.

The CUDA tests run where torch sees a GPU (``benchmarks/gpu_learners.py`` runs them there); on the CPU they
are skipped, and the CPU half checks everything that does not need one."""

import re
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import distrl
from distrl.agents.impala import Config as ImpalaConfig
from distrl.agents.impala.learner import ImpalaLearner
from distrl.agents.impala.networks import make_model
from distrl.api import plan_run
from distrl.envs import env_spec
from distrl.errors import ConfigError
from distrl.models import FlatParameters
from distrl.models.device import (
    Staged,
    Staging,
    WeightsToHost,
    cpu_has_bf16,
    mixed_precision,
    resolve_device,
    resolve_precision,
)

cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU that torch sees")


def test_cpu_and_auto_resolve_here():
    assert resolve_device("cpu") == torch.device("cpu")
    assert resolve_device("auto").type == ("cuda" if torch.cuda.is_available() else "cpu")


def _valid(name: str) -> bool:
    return name in ("cpu", "cuda", "auto") or re.fullmatch(r"cuda:[0-9]+", name) is not None


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.text(max_size=12), st.from_regex(r"cuda:\w{1,3}", fullmatch=True)).filter(lambda n: not _valid(n)))
def test_any_other_name_is_one_line_naming_the_valid_ones(name):
    with pytest.raises(ConfigError) as e:
        resolve_device(name)
    message = str(e.value)
    assert "cpu, cuda, cuda:N or auto" in message and "\n" not in message


def test_cpu_staging_is_zero_copy_for_writable_arrays_and_copies_read_only_ones():
    writable = np.arange(12, dtype=np.float32).reshape(3, 4)
    frozen = np.arange(5, dtype=np.uint8)
    frozen.flags.writeable = False  # as Ray's object store hands them out
    out = Staging("cpu").tensors({"a": writable, "b": frozen})
    assert out["a"].data_ptr() == writable.ctypes.data
    assert out["b"].dtype == torch.uint8 and out["b"].tolist() == [0, 1, 2, 3, 4]


def test_cpu_stage_is_zero_copy_and_a_staged_batch_is_taken_as_it_is():
    arrays = {"a": np.arange(6, dtype=np.float32)}
    staging = Staging("cpu")
    staged = staging.stage(arrays)
    assert isinstance(staged, Staged) and staged.event is None
    assert staged["a"].data_ptr() == arrays["a"].ctypes.data
    out = staging.tensors(staged)
    assert out["a"] is staged["a"] and not isinstance(out, Staged)


def test_weights_to_host_hands_over_the_weights_as_they_were_at_the_start_of_the_copy():
    weights = torch.arange(5, dtype=torch.float32)
    to_host = WeightsToHost(torch.device("cpu"))
    assert to_host.ready() is None  # nothing pending
    to_host.start(weights, 3)
    with pytest.raises(RuntimeError, match="still pending"):
        to_host.start(weights, 4)  # never dropped for a newer one
    weights += 100  # the next update
    first, version = to_host.ready()
    assert version == 3 and first.tolist() == [0, 1, 2, 3, 4] and not first.flags.writeable
    assert to_host.ready() is None  # handed over once
    to_host.start(weights, 4)
    weights += 100
    second, version = to_host.ready(wait=True)
    assert version == 4 and second.tolist() == [100, 101, 102, 103, 104]
    assert first.tolist() == [0, 1, 2, 3, 4]  # the buffer published before is not the one written next


def test_bf16_layers_hand_back_float32_close_to_the_float32_result():
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(16, 64), torch.nn.ReLU(), torch.nn.Linear(64, 4))
    x = torch.randn(32, 16)
    exact = net(x)
    holder = torch.nn.Module()
    holder.net = net
    assert mixed_precision([holder], torch.device("cpu")) == 2  # the two linear layers
    mixed = net(x)
    assert mixed.dtype == torch.float32
    torch.testing.assert_close(mixed, exact, rtol=0.05, atol=0.05)  # bfloat16 keeps 8 bits of mantissa
    mixed.sum().backward()
    assert all(p.grad is not None and p.grad.dtype == torch.float32 for p in net.parameters())


def test_flat_parameters_move_keeps_parameter_objects_and_views():
    net = torch.nn.Sequential(torch.nn.Linear(3, 5), torch.nn.Linear(5, 2))
    params = list(net.parameters())
    flat = FlatParameters(net)
    flat.to("cpu")
    assert [id(p) for p in net.parameters()] == [id(p) for p in params]
    offsets = np.cumsum([0] + [p.numel() for p in params[:-1]])
    assert all(p.data_ptr() == flat.buffer.data_ptr() + 4 * o for p, o in zip(params, offsets))


def _impala_batch(cfg, env, seed=0):
    rng = np.random.default_rng(seed)
    T, B = cfg.unroll_length, cfg.num_envs
    return {"obs": rng.normal(size=(T + 1, B) + env.obs_shape).astype(np.float32),
            "actions": rng.integers(0, 2, (T, B)).astype(np.int64),
            "rewards": rng.normal(size=(T, B)).astype(np.float32),
            "terminated": rng.random((T, B)) < 0.05, "truncated": np.zeros((T, B), bool),
            "valid": np.ones((T, B), bool), "behaviour_logp": np.full((T, B), np.log(0.5), np.float32)}


ONE_UPDATE = dict(num_envs=16, unroll_length=8)  # IMPALA's: one update per batch


def _impala_learner(device="cpu", precision="fp32"):
    env, cfg = env_spec("CartPole-v1"), ImpalaConfig(**ONE_UPDATE)
    torch.manual_seed(0)
    learner = ImpalaLearner(cfg, make_model(env, cfg))
    if device != "cpu" or precision != "fp32":
        learner.place(torch.device(device), precision)
    return learner, _impala_batch(cfg, env)


def test_a_learner_placed_in_bf16_learns_like_the_float32_one():
    exact, batch = _impala_learner()
    mixed, _ = _impala_learner(precision="bf16")
    a, b = exact.step(batch), mixed.step(batch)
    assert np.isfinite(b["loss_value"]) and mixed.version == 1
    assert abs(a["loss_value"] - b["loss_value"]) < 0.05 * abs(a["loss_value"]) + 0.01
    np.testing.assert_allclose(exact.get_weights(), mixed.get_weights(), atol=0.01)


def test_a_convolutional_learners_bf16_gradient_points_where_its_float32_one_does():
    """What ``precision=auto`` gives the Atari preset on a CPU with bf16 arithmetic: IMPALA's Nature CNN update on
    frames, every parameter's gradient within a few degrees of float32's (measured: cosine 0.987-1.0, the norm
    within 2.2%; checked with margin), the losses alike."""
    import gymnasium as gym

    from distrl.envs.make import EnvSpec

    env = EnvSpec(gym.spaces.Box(0, 255, (4, 84, 84), np.uint8), gym.spaces.Discrete(6))
    cfg = ImpalaConfig(num_envs=4, unroll_length=10, optimizer_eps=1e-5, lr=6e-4, entropy_coef=0.01)
    rng = np.random.default_rng(0)
    T, B = cfg.unroll_length, cfg.num_envs
    batch = {"obs": rng.integers(0, 256, (T + 1, B, 4, 84, 84), dtype=np.uint8),
             "actions": rng.integers(0, 6, (T, B)), "rewards": rng.choice([-1.0, 0.0, 1.0], (T, B)).astype(np.float32),
             "terminated": np.zeros((T, B), bool), "truncated": np.zeros((T, B), bool),
             "valid": np.ones((T, B), bool), "behaviour_logp": np.full((T, B), np.log(1 / 6), np.float32)}
    grads, reports = [], []
    for precision in ("fp32", "bf16"):
        torch.manual_seed(0)
        learner = ImpalaLearner(cfg, make_model(env, cfg))
        if precision == "bf16":
            learner.place(torch.device("cpu"), "bf16")
        learner.optimizer.step = lambda *args, **kwargs: None  # the gradients stay as computed
        reports.append(learner.step(batch))
        grads.append([p.grad for p in learner.params])
    for exact, mixed in zip(*grads):
        assert torch.nn.functional.cosine_similarity(exact.flatten(), mixed.flatten(), dim=0) > 0.97
        assert abs(mixed.norm() / exact.norm() - 1) < 0.06
    for key in ("loss_policy", "loss_value", "entropy"):
        assert reports[1][key] == pytest.approx(reports[0][key], rel=0.03, abs=0.01), key


@pytest.mark.parametrize("setting", ["device=cuda", "precision=bf16"])
def test_systems_whose_workers_learn_refuse_a_placed_learner(setting):
    key, value = setting.split("=")
    if key == "device" and not torch.cuda.is_available():
        with pytest.raises(ConfigError, match="no such GPU"):
            plan_run("a3c", "CartPole-v1", device="cuda")
        return
    for system in ("a3c", "gorila", "es"):
        with pytest.raises(ConfigError, match="keep device=cpu"):
            plan_run(system, "CartPole-v1", **{key: value})


def test_auto_precision_is_bf16_only_for_a_placeable_learner_on_a_cpu_with_bf16_arithmetic(monkeypatch):
    from distrl.models import device as device_module

    cpu, gpu = torch.device("cpu"), torch.device("cuda", 0)
    for has in (True, False):
        monkeypatch.setattr(device_module, "cpu_has_bf16", lambda has=has: has)
        assert resolve_precision("auto", cpu, placeable=True) == ("bf16" if has else "fp32")
        assert resolve_precision("auto", cpu, placeable=False) == "fp32"
        assert resolve_precision("auto", gpu, placeable=True) == "fp32"  # measured no faster on an H200
        assert [resolve_precision(p, cpu, placeable) for p in ("fp32", "bf16") for placeable in (True, False)] == [
            "fp32", "fp32", "bf16", "bf16"]  # asked for by name: as asked (a system without a learner says so)


def test_cpu_has_bf16_is_what_the_kernel_says_this_cpu_has():
    """Against an independent source: the CPU flags Linux reports (avx512_bf16, amx_tile)."""
    cpuinfo = Path("/proc/cpuinfo")
    if not cpuinfo.exists():
        pytest.skip("no /proc/cpuinfo (not Linux): torch's probe is the only source here")
    flags = set(next((line.split(":", 1)[1].split() for line in cpuinfo.read_text().splitlines()
                      if line.startswith("flags")), []))
    assert cpu_has_bf16() is bool(flags & {"avx512_bf16", "amx_tile"})


@pytest.mark.parametrize("has", [True, False])
def test_a_run_records_the_precision_auto_chose(monkeypatch, has):
    """config.yaml holds the resolved value (as ``autoscale``'s), and a system whose workers learn takes auto as
    fp32, where bf16 by name is refused."""
    from distrl.models import device as device_module

    monkeypatch.setattr(device_module, "cpu_has_bf16", lambda: has)
    assert plan_run("impala", "CartPole-v1", precision="auto")[1].precision == ("bf16" if has else "fp32")
    for system in ("a3c", "gorila", "es"):
        assert plan_run(system, "CartPole-v1", precision="auto")[1].precision == "fp32"


def test_a_trainer_given_auto_itself_resolves_it(monkeypatch, tmp_path):
    """A run config built by hand (not through ``plan_run``) that says auto: the trainer chooses as ``plan_run``
    would, so the learner's layers run under bf16 autocast on a CPU with bf16 arithmetic."""
    import dataclasses

    from distrl.models import device as device_module
    from distrl.runtime.trainer import Trainer

    monkeypatch.setattr(device_module, "cpu_has_bf16", lambda: True)
    _, run_cfg, _, _, program = plan_run("impala", "CartPole-v1", runtime="inline", total_steps=10**6)
    run_cfg = dataclasses.replace(run_cfg, precision="auto", run_dir=str(tmp_path / "run"))
    (tmp_path / "run").mkdir()
    trainer = Trainer(program, run_cfg, tmp_path / "run", system="impala")
    trainer.start()
    try:
        layers = [m for m in trainer.learner.model.modules() if isinstance(m, torch.nn.Linear)]
        assert layers and all("forward" in m.__dict__ for m in layers)  # wrapped by mixed_precision
    finally:
        trainer.close()


# --- on a GPU ------------------------------------------------------------------------------------------


@cuda
def test_cuda_staging_copies_every_array_and_reuses_its_pinned_buffers():
    staging = Staging("cuda")
    arrays = {"obs": np.arange(24, dtype=np.uint8).reshape(2, 3, 4), "mask": np.array([True, False])}
    first = staging.tensors(arrays)
    buffers = {k: v.data_ptr() for k, v in staging._pinned.items()}
    second = staging.tensors({k: v.copy() for k, v in arrays.items()})
    assert {k: v.data_ptr() for k, v in staging._pinned.items()} == buffers
    for out in (first, second):
        assert all(t.is_cuda for t in out.values())
        np.testing.assert_array_equal(out["obs"].cpu().numpy(), arrays["obs"])
        np.testing.assert_array_equal(out["mask"].cpu().numpy(), arrays["mask"])


@cuda
def test_cuda_batches_staged_from_another_thread_train_like_batches_staged_in_place():
    """The trainer's overlap: the next batch staged on a second thread (its own stream and pinned buffers)
    while the current update runs gives the same updates as staging each batch in the learner's step."""
    from concurrent.futures import ThreadPoolExecutor

    plain, batch = _impala_learner("cuda")
    overlapped, _ = _impala_learner("cuda")
    env, cfg = env_spec("CartPole-v1"), ImpalaConfig(**ONE_UPDATE)
    batches = [batch, _impala_batch(cfg, env, seed=1), _impala_batch(cfg, env, seed=2)]  # three different ones
    with ThreadPoolExecutor(1) as pool:
        ahead = pool.submit(overlapped.stage, batches[0])
        for i, arrays in enumerate(batches):
            staged = ahead.result()
            assert isinstance(staged, Staged) and staged.event is not None
            if i + 1 < len(batches):
                ahead = pool.submit(overlapped.stage, batches[i + 1])
            a, b = plain.step(arrays), overlapped.step(staged)
            assert abs(a["loss_value"] - b["loss_value"]) <= 1e-5 * max(1.0, abs(a["loss_value"]))
    np.testing.assert_array_equal(plain.get_weights(), overlapped.get_weights())


@cuda
def test_cuda_weights_leave_the_gpu_without_a_wait_and_as_they_were_after_the_update():
    learner, batch = _impala_learner("cuda")
    learner.step(batch)
    after_first = learner.get_weights()
    to_host = WeightsToHost(learner.device)
    to_host.start(learner.device_weights(), learner.version)
    learner.step(batch)  # queued after the copy: the copy still holds the first update's weights
    copied, version = to_host.ready(wait=True)
    assert version == 1
    np.testing.assert_array_equal(copied, after_first)
    assert not np.array_equal(copied, learner.get_weights())


@cuda
@pytest.mark.parametrize("runtime", ["inline", "local"])
def test_on_a_gpu_a2c_stays_on_policy_and_impala_overlaps_on_local(runtime, tmp_path):
    """``overlap_transfers=auto`` on a GPU: off on inline, where A2C's actors must act with each update's weights
    (policy
    lag 0); on for IMPALA on local, whose runs still learn CartPole's first steps with it."""
    if runtime == "inline":
        s = distrl.train("a2c", env="CartPole-v1", runtime="inline", device="cuda", total_steps=20_000,
                         run_dir=str(tmp_path / "a2c"))
        assert s["policy_lag_mean"] == 0.0 and s["learner_updates"] > 0
    else:
        s = distrl.train("impala", env="CartPole-v1", runtime="local", device="cuda", total_steps=200_000,
                         run_dir=str(tmp_path / "impala"))
        assert s["learner_updates"] > 0 and s["episode_return_mean"] > 30  # random play: about 22


@cuda
def test_a_learner_on_cuda_computes_what_it_computes_on_the_cpu():
    cpu, batch = _impala_learner()
    gpu, _ = _impala_learner("cuda")
    a, b = cpu.step(batch), gpu.step(batch)
    for key in ("loss_policy", "loss_value", "entropy", "grad_norm", "rho_mean"):
        assert abs(a[key] - b[key]) <= 1e-4 * max(1.0, abs(a[key])), key
    np.testing.assert_allclose(cpu.get_weights(), gpu.get_weights(), atol=1e-5)


@cuda
@pytest.mark.parametrize("system,env", [
    ("a2c", "CartPole-v1"), ("impala", "CartPole-v1"), ("apex-dqn", "CartPole-v1"), ("apex-ddpg", "Pendulum-v1"),
    ("qt-opt", "Pendulum-v1"), ("r2d2", "distrl/CartPoleNoVelocity-v1"), ("seed", "CartPole-v1"),
    ("seed-r2d2", "distrl/CartPoleNoVelocity-v1")])
def test_every_placeable_learner_trains_on_cuda(system, env, tmp_path):
    extra = {"inference_device": "cuda"} if system.startswith("seed") else {}
    s = distrl.train(system, env=env, runtime="inline", device="cuda", precision="bf16", total_steps=10**9,
                     max_wall_s=4, run_dir=str(tmp_path / "run"), **extra)
    assert s["learner_updates"] > 0  # (Pendulum's 200-step episodes may not have ended in 4 s: no return yet)
    assert s["episode_return_mean"] is None or np.isfinite(s["episode_return_mean"])
    assert (tmp_path / "run" / "checkpoints").is_dir()
