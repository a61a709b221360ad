"""Every system's acting policy, exported as ONNX (run by onnxruntime) and as TorchScript, gives the actions
``distrl.load_policy`` gives on the same observations; recurrent policies carry their state through the graph's
inputs and outputs; the sampling head draws from the policy's own distribution."""

from types import SimpleNamespace

import numpy as np
import onnxruntime  # noqa: F401  (the test extra installs it)
import pytest
import torch

import distrl
from distrl.agents.registry import SYSTEMS, get_system
from distrl.deploy import acting_graph, run_exported, write
from distrl.envs import env_spec

CONTINUOUS = ("apex-ddpg", "qt-opt")
STEPS = 12  # observations fed one after the other (a recurrent policy's state carried through all of them)


def _env(name: str) -> str:
    return "Pendulum-v1" if name in CONTINUOUS else "CartPole-v1"


def _train(name: str, run_dir, env: str | None = None, **settings) -> None:
    env = env or _env(name)
    if name == "r2d3":  # learns from demonstrations: it needs a dataset
        from distrl.datasets import record_episodes, write_episodes

        write_episodes(run_dir.parent / f"{run_dir.name}-demos", record_episodes(env, lambda obs: 0, episodes=1),
                       "constant")
        settings["demos"] = str(run_dir.parent / f"{run_dir.name}-demos")
    distrl.train(name, env=env, runtime="inline", total_steps=1000, run_dir=str(run_dir), progress=False, **settings)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """One small run per system, trained on first use and shared by both formats' tests."""
    runs = {}

    def get(name):
        if name not in runs:
            runs[name] = tmp_path_factory.mktemp("runs") / name
            _train(name, runs[name])
        return runs[name]

    return get


def _observations(policy, n: int) -> np.ndarray:
    space = policy.spec.observation_space
    space.seed(0)
    return np.stack([space.sample() for _ in range(n)])


def _exported_actions(path, fmt: str, obs: np.ndarray, out: dict, recurrent: bool) -> np.ndarray:
    """Each observation in turn through the exported graph (the LSTM state fed back), as ``Policy.act`` sees them."""
    if not recurrent:
        return run_exported(path, fmt, {"obs": obs})[0]
    size = out["inputs"]["h"][0][1]
    h = c = np.zeros((1, size), np.float32)
    actions = []
    for o in obs:
        action, _, h, c = run_exported(path, fmt, {"obs": o[None], "h": h, "c": c})
        actions.append(action[0])
    return np.stack(actions)


@pytest.mark.parametrize("fmt", ["onnx", "torchscript"])
@pytest.mark.parametrize("name", sorted(SYSTEMS))
def test_every_systems_exported_policy_acts_as_load_policy(name, fmt, trained, tmp_path):
    run_dir = trained(name)
    out = distrl.export(run_dir, fmt, out=tmp_path / f"policy.{fmt}")
    policy = distrl.load_policy(run_dir)
    obs = _observations(policy, STEPS)
    policy.reset()
    expected = np.stack([policy.act(o) for o in obs])
    recurrent = "h" in out["inputs"]
    assert recurrent == (name in ("r2d2", "r2d3", "seed-r2d2"))
    got = _exported_actions(out["out"], fmt, obs, out, recurrent)
    assert got.shape == expected.shape and got.dtype == expected.dtype
    if name == "qt-opt":  # CEM's argmax: a near tie between two samples may flip, never to a worse Q-value
        q = policy.model.online.q
        with torch.no_grad():
            q_got, q_expected = (q(torch.as_tensor(obs), torch.as_tensor(a)) for a in (got, expected))
        assert torch.allclose(q_got, q_expected, atol=1e-5)
        assert (np.abs(got - expected).max(1) < 1e-4).mean() >= 0.9
    elif expected.dtype.kind == "f":
        np.testing.assert_allclose(got, expected, atol=1e-4, rtol=1e-4)
    else:
        np.testing.assert_array_equal(got, expected)
    if name in CONTINUOUS:  # clipped into the box inside the graph, as Policy.act clips
        space = policy.spec.action_space
        assert (got >= space.low).all() and (got <= space.high).all()


def test_a_batch_of_observations_gets_each_ones_own_action_with_the_state_per_row(trained, tmp_path):
    """A recurrent graph's batch is several clients' episodes at once: each row's state is its own."""
    run_dir = trained("r2d2")
    out = distrl.export(run_dir, "onnx", out=tmp_path / "r2d2.onnx")
    policy = distrl.load_policy(run_dir)
    obs = _observations(policy, 2 * STEPS).reshape(STEPS, 2, -1)
    size = out["inputs"]["h"][0][1]
    h = c = np.zeros((2, size), np.float32)
    for t in range(STEPS):
        action, _, h, c = run_exported(out["out"], "onnx", {"obs": obs[t], "h": h, "c": c})
    for row in range(2):
        policy.reset()
        alone = [policy.act(o) for o in obs[:, row]]
        assert action[row] == alone[-1]


def test_the_sampling_head_draws_from_the_categorical_the_logits_give(trained, tmp_path):
    out = distrl.export(trained("ppo"), "onnx", out=tmp_path / "ppo.onnx", head="sample")
    assert out["head"] == "sample"
    obs = np.repeat(_observations(distrl.load_policy(trained("ppo")), 1), 4000, axis=0)
    action, logits = run_exported(out["out"], "onnx", {"obs": obs})
    probs = torch.softmax(torch.as_tensor(logits[0]), -1).numpy()
    freq = np.bincount(action, minlength=len(probs)) / len(action)
    np.testing.assert_allclose(freq, probs, atol=4 * np.sqrt(0.25 / len(action)))  # 4 standard errors at worst


def test_the_sampling_head_of_a_gaussian_policy_spreads_by_its_std_and_stays_in_the_box(tmp_path):
    run_dir = tmp_path / "ppo-pendulum"
    _train("ppo", run_dir, env="Pendulum-v1")
    policy = distrl.load_policy(run_dir)
    out = distrl.export(run_dir, "torchscript", out=tmp_path / "p.pt", head="sample")
    obs = np.repeat(_observations(policy, 1), 4000, axis=0)
    action, mean = run_exported(out["out"], "torchscript", {"obs": obs})
    space = policy.spec.action_space
    assert (action >= space.low).all() and (action <= space.high).all()
    std = float(policy.model.log_std.detach().exp())
    inside = np.abs(mean[0] - space.low) > 3 * std and np.abs(space.high - mean[0]) > 3 * std
    if inside.all():  # the clip leaves the draws' spread alone only well inside the box
        assert abs(action.std() - std) < 0.1 * std
    else:
        assert action.std() > 0


def test_greedy_mean_and_sampling_head_of_the_greedy_graph_agree(trained, tmp_path):
    """Greedy actions are the argmax of the same logits the graph returns (the head the docs describe)."""
    out = distrl.export(trained("appo"), "onnx", out=tmp_path / "a.onnx")
    obs = _observations(distrl.load_policy(trained("appo")), 64)
    action, logits = run_exported(out["out"], "onnx", {"obs": obs})
    np.testing.assert_array_equal(action, logits.argmax(-1))


def test_several_categorical_actions_and_dict_observations_export(tmp_path):
    run_dir = tmp_path / "lights"
    distrl.train("appo", env="tests.envs.spaces:DistrlLights-v0", runtime="inline", total_steps=2000,
                 run_dir=str(run_dir), progress=False, num_envs=8, unroll_length=16)
    policy = distrl.load_policy(run_dir)
    out = distrl.export(run_dir, "onnx", out=tmp_path / "lights.onnx")
    obs = _observations(policy, STEPS)
    action, logits = run_exported(out["out"], "onnx", {"obs": obs})
    np.testing.assert_array_equal(action, np.stack([policy.act(o) for o in obs]))
    assert logits.shape[:2] == (STEPS, 3)  # [batch, actions, options]


def test_an_atari_policy_takes_uint8_frames(tmp_path):
    """The Nature CNN scales frames inside: the graph's input is the env's uint8 frame stack."""
    import ale_py  # noqa: F401  (the test extra installs it: Atari ids)
    module = get_system("impala")
    spec = env_spec("ALE/Pong-v5")
    model = module.make_model(spec, module.Config()).eval()
    policy = SimpleNamespace(model=model, spec=spec, system="impala", env_id="ALE/Pong-v5", snapshot="last")
    graph = acting_graph(policy)
    assert graph.inputs["obs"].dtype == torch.uint8 and graph.inputs["obs"].shape[1:] == (4, 84, 84)
    path = write(graph, "onnx", tmp_path / "pong.onnx")
    frames = torch.randint(0, 256, (3, 4, 84, 84), dtype=torch.uint8)
    action, _ = run_exported(path, "onnx", {"obs": frames.numpy()})
    with torch.no_grad():
        np.testing.assert_array_equal(action, model.greedy(frames).numpy())
