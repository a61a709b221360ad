"""The Python API, mirroring the CLI: ``distrl.train(...)``, ``distrl.load_policy(...)``, ``distrl.evaluate(...)``."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any

import numpy as np
import torch

from distrl import config as config_mod
from distrl.agents.registry import get_system
from distrl.core.system import BuildContext
from distrl.envs import check_env_id, env_spec, make_env
from distrl.errors import ConfigError
from distrl.run_config import RunConfig
from distrl.runtime import (
    CheckpointObserver,
    MetricsObserver,
    ProgressObserver,
    Trainer,
)
from distrl.runtime.run.checkpoint import latest_checkpoint, load_checkpoint
from distrl.runtime.run.run_dir import (
    default_run_dir,
    prepare_run_dir,
    read_config,
    write_config,
)


def resolve_configs(system: str, overrides: dict[str, Any], base: dict | None = None):
    """Split ``overrides`` between the run settings and the system's settings; build and validate both."""
    module = get_system(system)
    run_fields = {f.name for f in dataclasses.fields(RunConfig)}
    sys_fields = {f.name for f in dataclasses.fields(module.Config)}
    run_over, sys_over = {}, {}
    for key, value in overrides.items():
        if key in run_fields:
            run_over[key] = value
        elif key in sys_fields:
            sys_over[key] = value
        else:
            raise config_mod.unknown_setting(key, sorted(run_fields | sys_fields))
    run_base = _from_saved(RunConfig, base["run"], {}, {}, "run") if base else None
    sys_base = _from_saved(module.Config, base["system_config"], module.RENAMED_SETTINGS,
                           module.OLDER_RUN_DEFAULTS, system) if base else None
    return module, config_mod.build(RunConfig, run_over, run_base), config_mod.build(module.Config, sys_over, sys_base)


def _from_saved(cls, saved: dict, renamed: dict, older_defaults: dict, what: str):
    """A run's saved settings as ``cls``, also when saved by an older distrl: renamed settings take their
    new names, and settings added since take the value that reproduces how such runs behaved (a system
    declares both: ``RENAMED_SETTINGS``, ``OLDER_RUN_DEFAULTS``), not today's default."""
    values = {renamed.get(k, k): v for k, v in saved.items()}
    for key, value in older_defaults.items():
        values.setdefault(key, value)
    unknown = sorted(set(values) - {f.name for f in dataclasses.fields(cls)})
    if unknown:
        raise ConfigError(f"the run's saved {what} settings include {', '.join(unknown)}, which this version of "
                          f"distrl does not know (saved by another version?)")
    return cls(**_tuples(values))


def _tuples(d: dict) -> dict:
    return {k: tuple(v) if isinstance(v, list) else v for k, v in d.items()}


def train(system: str, env: str | None = None, *, config_file: str | None = None, resume: bool = False,
          force: bool = False, progress: bool = False, **settings: Any) -> dict[str, Any]:
    """Train ``system`` and return its summary (also written to ``<run_dir>/summary.json``).

    ``settings`` are any run or system settings (see ``distrl list``), e.g.
    ``distrl.train("a2c", env="CartPole-v1", total_steps=200_000, lr=1e-3, runtime="inline")``.
    """
    return make_trainer(system, env, config_file=config_file, resume=resume, force=force, progress=progress,
                        **settings).run()


def make_trainer(system: str, env: str | None = None, *, config_file: str | None = None, resume: bool = False,
                 force: bool = False, progress: bool = False, **settings: Any) -> Trainer:
    """A :class:`~distrl.runtime.Trainer` for ``system``, its run dir prepared and its config written, not
    started: ``trainer.start()``, ``trainer.step(env_steps=...)``, ``trainer.set_hyperparameters(...)``,
    ``trainer.close()``. Every input is checked before anything is written."""
    overrides: dict[str, Any] = config_mod.load_yaml(config_file) if config_file else {}
    if env is not None:
        overrides["env"] = env
    overrides.update({k: v for k, v in settings.items() if v is not None})
    base = None
    if resume:
        if not overrides.get("run_dir"):
            raise ConfigError("--resume needs --run-dir naming the run to continue")
        saved = read_config(Path(overrides["run_dir"]))
        if saved.get("system") != system:
            raise ConfigError(f"run dir '{overrides['run_dir']}' holds a {saved.get('system')} run, not {system}")
        base = saved
    module, run_cfg, sys_cfg = resolve_configs(system, overrides, base)
    if run_cfg.total_steps is None:
        run_cfg = dataclasses.replace(run_cfg, total_steps=module.DEFAULT_TOTAL_STEPS)
    check_env_id(run_cfg.env)
    spec = env_spec(run_cfg.env)
    if run_cfg.runtime == "ray":
        require_ray()
    ctx = BuildContext(run_cfg.env, spec, run_cfg.total_steps, eval_interval_steps=run_cfg.eval_interval_steps,
                       eval_episodes=run_cfg.eval_episodes)
    program = module.build(sys_cfg, ctx)
    if run_cfg.runtime is None:
        run_cfg = dataclasses.replace(run_cfg, runtime="local" if "local" in program.runtimes else program.runtimes[0])
    if run_cfg.runtime not in program.runtimes:
        raise ConfigError(f"runtime '{run_cfg.runtime}' is not supported by {system} (supported: {', '.join(program.runtimes)})")
    run_dir = Path(run_cfg.run_dir) if run_cfg.run_dir else default_run_dir(system, run_cfg.env)
    prepare_run_dir(run_dir, resume=resume, force=force)
    run_cfg = dataclasses.replace(run_cfg, run_dir=str(run_dir))
    write_config(run_dir, system, run_cfg, sys_cfg)
    torch.set_num_threads(run_cfg.torch_threads)
    torch.manual_seed(run_cfg.seed)
    np.random.seed(run_cfg.seed)
    observers = (MetricsObserver(run_dir), CheckpointObserver(run_cfg.checkpoint_interval_s),
                 ProgressObserver(run_cfg.total_steps, f"{system} {run_cfg.env}", enabled=progress))
    return Trainer(program, run_cfg, run_dir, system=system, resume=resume, observers=observers)


def require_ray() -> None:
    """``--runtime ray`` without Ray installed: one line naming the install, before anything is written."""
    try:
        import ray  # noqa: F401
    except ImportError:
        raise ConfigError("--runtime ray needs Ray, which is not installed: pip install -e '.[ray]' (from a clone) "
                          "or pip install 'distrl[ray]'") from None


class Policy:
    """A trained policy loaded from a run dir: ``policy.act(obs)`` returns the greedy action."""

    def __init__(self, run_dir: str | Path):
        self.run_dir = Path(run_dir)
        saved = read_config(self.run_dir)
        self.system = saved["system"]
        module, run_cfg, sys_cfg = resolve_configs(self.system, {}, saved)
        self.env_id = run_cfg.env
        self.spec = env_spec(self.env_id)
        self.model = module.make_model(self.spec, sys_cfg)
        ckpt = latest_checkpoint(self.run_dir / "checkpoints")
        if ckpt is None:
            raise ConfigError(f"run dir '{run_dir}' has no checkpoint yet")
        load_checkpoint(ckpt, {"model": self.model})
        self.model.eval()
        space = self.spec.action_space
        self._clip = None if self.spec.discrete else (space.low, space.high)

    def act(self, obs) -> np.ndarray:
        with torch.inference_mode():
            x = torch.as_tensor(np.asarray(obs)).unsqueeze(0)
            a = self.model.greedy(x)[0].numpy()
        return np.clip(a, *self._clip) if self._clip is not None else a


def load_policy(run_dir: str | Path) -> Policy:
    return Policy(run_dir)


def evaluate(run_dir: str | Path, episodes: int = 10, seed: int = 12345, video: bool = False) -> dict[str, Any]:
    """Play ``episodes`` with the greedy policy; optionally save the first episode as an animated GIF."""
    if episodes < 1:
        raise ConfigError(f"--episodes must be >= 1; got {episodes}")
    policy = load_policy(run_dir)
    if video:  # frames are drawn off-screen: no display needed, and none of SDL's complaints about one
        os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
    env = make_env(policy.env_id, render_mode="rgb_array" if video else None)
    returns, frames = [], []
    for ep in range(episodes):
        obs, _ = env.reset(seed=seed + ep)
        done, total = False, 0.0
        while not done:
            if video and ep == 0:
                frames.append(env.render())
            obs, reward, terminated, truncated, _ = env.step(policy.act(obs))
            total += float(reward)
            done = terminated or truncated
        returns.append(total)
    env.close()
    # rounded: float sums of rewards carry noise in the last digits (0.9600000000000002, a std of 2.2e-16)
    result = {"mean_return": round(float(np.mean(returns)), 6), "std_return": round(float(np.std(returns)), 6),
              "episodes": episodes}
    if video and frames:
        result["video"] = str(_write_gif(Path(run_dir) / "videos" / "eval-episode-0.gif", frames))
    return result


def _write_gif(path: Path, frames: list[np.ndarray]) -> Path:
    from PIL import Image

    path.parent.mkdir(parents=True, exist_ok=True)
    images = [Image.fromarray(f) for f in frames[::2]]
    images[0].save(path, save_all=True, append_images=images[1:], duration=40, loop=0)
    return path


def join(address: str, timeout_s: float = 30.0) -> None:
    """Run one env actor for the SEED inference server at ``address`` (``HOST:PORT``) until it stops.

    The server's handshake says which env, how many copies and which seed, so this needs nothing
    but the address and ``pip install distrl``. Bad addresses and full servers are one-line errors.
    """
    import grpc

    from distrl.agents.common.env_actor import EnvActor
    from distrl.config import split_address
    from distrl.runtime.services.inference.client import run_env_actor
    from distrl.runtime.services.inference.grpc import GrpcLink

    if split_address(address) is None:
        raise ConfigError(f"join address '{address}' is not HOST:PORT (e.g. 10.0.0.5:50051)")
    try:
        link = GrpcLink(address, timeout_s=timeout_s)
    except grpc.FutureTimeoutError:
        raise ConfigError(f"no SEED server answered at {address} within {timeout_s:g}s "
                          "(is it running with --set bind=HOST:PORT and --set remote_actors=N?)") from None
    except grpc.RpcError as e:
        raise ConfigError(f"the SEED server at {address} refused the actor: {e.details()}") from None
    cfg = link.config
    actor = EnvActor(cfg["env_id"], cfg["num_envs"], cfg["seed"])
    print(f"distrl: joined {address} as actor slot {cfg['slot']} ({cfg['num_envs']} x {cfg['env_id']})", flush=True)
    try:
        run_env_actor(actor, link)
    finally:
        link.close()
        actor.close()
