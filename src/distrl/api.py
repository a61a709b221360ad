"""The Python API, declared here once and re-exported lazily by ``distrl/__init__.py`` (``distrl.train(...)``,
``distrl.load_policy(...)``, ...); the CLI is a thin layer over it."""

from __future__ import annotations

import dataclasses
import os
import secrets
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import torch

from distrl import config as config_mod
from distrl.agents.registry import FORMER_NAMES, SYSTEMS, get_system, saved_run
from distrl.core.program import Channel, ReplayService
from distrl.core.system import BuildContext
from distrl.envs import check_env_id, env_spec, make_env
from distrl.envs.multi_agent import identity as env_identity
from distrl.envs.teams import check_team, team_of
from distrl.errors import ConfigError
from distrl.models import load_flat
from distrl.models.device import resolve_device, resolve_precision
from distrl.ops import all_finite
from distrl.presets import preset_path
from distrl.run_config import RunConfig
from distrl.runtime import (
    CheckpointObserver,
    MetricsObserver,
    ProgressObserver,
    Trainer,
)
from distrl.runtime.backends import refusal
from distrl.runtime.backends.placement import shared_slot_bytes, slot_bytes, slot_count
from distrl.runtime.compute import setup_compute
from distrl.runtime.run.autoscale import Autoscaler
from distrl.runtime.run.best_policy import headline, load_best_weights, read_best
from distrl.runtime.run.checkpoint import (
    check_counters,
    latest_checkpoint,
    load_checkpoint,
)
from distrl.runtime.run.run_dir import (
    config_data,
    default_run_dir,
    prepare_run_dir,
    read_config,
    write_config,
)
from distrl.runtime.run.trackers import check_tracker, tracker_observer
from distrl.runtime.shared_memory import byte_size, free_bytes

# run settings a run saved before they existed resumes with: what it ran with, not today's default
OLDER_RUN_SETTINGS = {"autoscale": "off"}


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
    run_base = _from_saved(RunConfig, base["run"], {}, OLDER_RUN_SETTINGS, "run") if base else None
    sys_base = _from_saved(module.Config, base["system_config"], module.RENAMED_SETTINGS,
                           module.OLDER_RUN_DEFAULTS, system) if base else None
    sys_cfg = config_mod.build(module.Config, sys_over, sys_base)
    if sys_base is not None:
        recorded = {module.RENAMED_SETTINGS.get(k, k) for k in base["system_config"]} | set(module.OLDER_RUN_DEFAULTS)
        _check_fixed(sys_base, sys_cfg, {k: v for k, v in sys_over.items() if k in recorded})
    return module, config_mod.build(RunConfig, run_over, run_base), sys_cfg


def _check_fixed(saved, resumed, overrides: dict) -> None:
    """A resumed run keeps the settings its checkpoint depends on (declared ``fixed``): changed, one would load and
    silently reinterpret what the network or the replay holds (``value_rescale_eps``, ES's ``obs_norm``), or fail
    later with a state-dict error (a normaliser's submodules). ``overrides``: only settings the saved run records
    (a setting newer than the run takes the value given)."""
    for f in dataclasses.fields(saved):
        why, old, new = f.metadata.get("fixed"), getattr(saved, f.name), getattr(resumed, f.name)
        if why and f.name in overrides and new != old:
            raise ConfigError(f"setting '{f.name}' cannot change on --resume: the run has {old!r}, got {new!r} "
                              f"({why}); leave it out, or start a new run")


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
    try:  # coerced and validated like command-line settings: a hand-edited config.yaml gets the same checks
        return config_mod.build(cls, _tuples(values))
    except ConfigError as e:
        raise ConfigError(f"the run's saved {what} settings: {e}") from None


def _tuples(d: dict) -> dict:
    return {k: tuple(v) if isinstance(v, list) else v for k, v in d.items()}


def train(system: str, env: str | None = None, *, config_file: str | None = None, resume: bool = False,
          force: bool = False, progress: bool = True, token: str | None = None, preset: str | None = None,
          **settings: Any) -> dict[str, Any]:
    """Train ``system`` (``"ppo"``, ``"appo"``, ``"apex-dqn"``, ... see ``distrl list``) on ``env`` and return
    its summary (also written to ``<run_dir>/summary.json``).

    ``settings`` are any run or system settings, e.g. ``total_steps=200_000, seed=3, runtime="inline",
    num_actors=4, lr=1e-3, run_dir="runs/exp1"``. ``config_file`` is a YAML file of settings (keyword
    settings win); ``preset`` names one of the system's preset files (``configs/<system>/<name>.yaml``), which
    both override. ``resume=True`` continues the run in ``run_dir`` from its last checkpoint; ``force=True``
    deletes an existing ``run_dir`` first. ``progress`` prints a line per log interval (a live bar on a terminal);
    ``progress=False`` trains silently. Bad settings raise ``distrl.errors.ConfigError`` with one line.
    """
    trainer = make_trainer(system, env, config_file=config_file, resume=resume, force=force, progress=progress,
                           token=token, preset=preset, **settings)
    fresh = not resume and not (trainer.run_dir / "config.yaml").exists()
    try:
        return trainer.run()
    except BaseException:
        if fresh and not trainer.started:  # it failed before training began: leave no half-made run dir
            shutil.rmtree(trainer.run_dir, ignore_errors=True)
        raise


def check_learner_device(system: str, run_cfg: RunConfig, program) -> None:
    """The run's device exists here, and the system has a learner that can be placed on it (one line each)."""
    device = resolve_device(run_cfg.device)
    if run_cfg.overlap_transfers == "on" and not program.placeable_learner:
        raise ConfigError(f"overlap_transfers=on: {system} has no learner on a device whose transfers could overlap "
                          "its "
                          f"updates (valid here: auto, off)")
    if device.type == "cpu" and run_cfg.precision == "fp32":
        return
    asked = f"device={run_cfg.device}" if device.type != "cpu" else f"precision={run_cfg.precision}"
    if program.make_learner is None:
        raise ConfigError(f"{asked}: {system} has no central learner (its workers learn, on the CPU); "
                          f"keep device=cpu, precision=fp32")
    if not program.learner_on_device:
        raise ConfigError(f"{asked}: {system}'s learner computes no network gradient to place; "
                          f"keep device=cpu, precision=fp32")


# those whose actors autoscale=on scales (a role with elastic=True)
ELASTIC_SYSTEMS = ("appo", "impala", "seed", "apex-dqn")


def actor_bounds(system: str, run_cfg: RunConfig, program) -> tuple[int, int]:
    """``autoscale=on``'s fewest and most actors, or why the run cannot autoscale (one line): a system whose actors
    a run can add or remove, a runtime of processes, ``min_actors`` enough to fill a learner batch, within
    ``max_actors``."""
    elastic = [r for r in program.roles if r.elastic]
    if not elastic:
        raise ConfigError(f"autoscale=on: {system} has no actors a run can add or remove (systems that do: "
                          f"{', '.join(ELASTIC_SYSTEMS)})")
    if run_cfg.runtime not in ("local", "ray"):
        raise ConfigError(f"autoscale=on needs a runtime of processes (local or ray); got {run_cfg.runtime}")
    high = run_cfg.max_actors or 4 * (os.cpu_count() or 1)
    role = elastic[0]
    batch = program.services[role.emits].batch * run_cfg.num_learners \
        if role.emits is not None and role.emits == program.consumes else 1
    floor = -(-batch // role.in_flight)  # the actors' steps in flight must fill a learner batch (every learner's)
    low = max(run_cfg.min_actors, floor)
    if low > high:
        raise ConfigError(f"autoscale=on: min_actors {low} (at least {floor}, for a learner batch of {batch} "
                          f"{role.emits}) is above max_actors {high}")
    free = free_bytes() if run_cfg.runtime == "local" and not run_cfg.max_actors else None
    if free is not None:  # the default ceiling: also no more actors than half the free shared memory holds
        fitting = actors_fitting(program, role, high, free // 2)
        if fitting < low:
            raise ConfigError(f"autoscale=on: {low} actors' unroll slots ({byte_size(slot_bytes(role))} each) need "
                              f"more than half of the shared memory free ({byte_size(free)} in /dev/shm); give "
                              "max_actors, or num_actors and autoscale=off")
        high = fitting
    return low, high


def actors_fitting(program, role, most: int, budget: int) -> int:
    """The most components of ``role``, up to ``most``, whose output slots fit in ``budget`` bytes beside the other
    roles' slots (``local`` keeps them all in shared memory); 0 if not even one's do."""
    others = shared_slot_bytes(program) - slot_count(program, role, role.count) * slot_bytes(role)
    n = most
    while n > 0 and others + slot_count(program, role, n) * slot_bytes(role) > budget:
        n -= 1
    return n


def check_shared_memory(system: str, run_cfg: RunConfig, program) -> None:
    """``local``: the components' output slots fit in the shared memory free now (one line if not). Too large a
    block fails with SIGBUS when its pages are first written, not with an error: ``docker run``'s default /dev/shm
    is 64 MB, and one APPO unroll of Pong frames (16 envs x 512 steps) is 232 MB."""
    if run_cfg.runtime != "local":
        return
    need, free = shared_slot_bytes(program), free_bytes()
    if free is None or need <= free:
        return
    bounds = "num_actors, or max_actors" if run_cfg.autoscale == "on" else "num_actors"
    raise ConfigError(f"{system} on local needs {byte_size(need)} of shared memory for its components' unrolls and "
                      f"/dev/shm has {byte_size(free)} free: give fewer actors ({bounds}), shorter unrolls (num_envs, "
                      "unroll_length), or more shared memory (docker run --shm-size=...)")


def resolve_autoscale(system: str, run_cfg: RunConfig, sys_cfg, program, chosen: dict, resumed: bool) -> str:
    """``autoscale=auto``, the default: on where the run can autoscale and its claim was measured (an elastic system
    on ``local`` or ``ray``, one learner, no remote actors' slots, within its bounds) and nobody fixed the actors
    (``num_actors`` absent from the preset, the config file and the settings: ``chosen``); off elsewhere. The claim
    (docs/guide/autoscale.md): from either bad start every such system reaches 0.9 of its best fixed count's env
    steps/s within 60 s. A resumed run keeps what it ran with (``config.yaml`` records on or off) unless the resume
    fixes its actors (``num_actors``) or moves it where it cannot scale (``inline``)."""
    if resumed and run_cfg.autoscale == "on" and "autoscale" not in chosen and (
            "num_actors" in chosen or run_cfg.runtime not in ("local", "ray")):
        return "off"
    if run_cfg.autoscale != "auto":
        return run_cfg.autoscale
    if ("num_actors" in chosen or system not in ELASTIC_SYSTEMS or run_cfg.runtime not in ("local", "ray")
            or run_cfg.num_learners > 1 or getattr(sys_cfg, "remote_actors", 0)):
        return "off"
    if {"min_actors", "max_actors"} & set(chosen):  # bounds asked for: ones that cannot hold are one line, not ignored
        return "on"
    try:
        actor_bounds(system, run_cfg, program)
    except ConfigError:
        return "off"
    return "on"


def autoscaled(system: str, module, run_cfg: RunConfig, sys_cfg, ctx: BuildContext, program):
    """``autoscale=on``: the program built for ``max_actors`` (so that every service is sized for the most), its
    elastic role starting ``num_actors`` of them; the bounds checked (one line each)."""
    low, high = actor_bounds(system, run_cfg, program)
    start = min(max(sys_cfg.num_actors, low), high)
    program = module.build(dataclasses.replace(sys_cfg, num_actors=high), dataclasses.replace(ctx, autoscale=True))
    program = program.starting(start)
    return dataclasses.replace(run_cfg, min_actors=low, max_actors=high), program


def check_learners(system: str, run_cfg: RunConfig, program) -> None:
    """``num_learners > 1``: a system with a gradient learner, on ``local``, enough GPUs for one each (one line)."""
    n = run_cfg.num_learners
    if n == 1:
        return
    if not program.placeable_learner:
        raise ConfigError(f"num_learners={n}: {system} has no gradient learner to replicate (valid: 1)")
    if run_cfg.runtime not in ("local", "ray"):
        raise ConfigError(f"num_learners={n} needs a runtime of processes (local or ray); got {run_cfg.runtime!r}")
    replays = [name for name in program.learner_uses if isinstance(program.services[name], ReplayService)]
    if len(replays) > 1:  # each is sharded alone; a batch mixed from two is not shared out between learners yet
        raise ConfigError(f"num_learners={n}: {system} mixes samples of {' and '.join(replays)} into its batches, "
                          "which is not shared out between learners yet (valid: 1)")
    device = resolve_device(run_cfg.device)
    if run_cfg.runtime == "local" and device.type == "cuda" and (device.index or 0) + n > torch.cuda.device_count():
        raise ConfigError(f"num_learners={n} with device={run_cfg.device} needs {n} GPUs from {device} "
                          f"(one each); this torch sees {torch.cuda.device_count()}")


def system_run_defaults(module, run_cfg: RunConfig) -> RunConfig:
    """Fill the run settings left to the system: its budget, and its periodic evaluation (``RUN_DEFAULTS``: R2D2
    keeps its best evaluated policy; the others evaluate only when asked)."""
    defaults = {"total_steps": module.DEFAULT_TOTAL_STEPS, "eval_interval_steps": 0, "eval_episodes": 5,
                **getattr(module, "RUN_DEFAULTS", {})}
    return dataclasses.replace(run_cfg, **{k: v for k, v in defaults.items() if getattr(run_cfg, k) is None})


def plan_run(system: str, env: str | None = None, *, config_file: str | None = None, resume: bool = False,
             preset: str | None = None, **settings: Any):
    """Every check of a run's inputs, nothing written: (system module, run config, system config, env
    spec, program). ``make_trainer`` and ``distrl pbt`` start from it. Settings override in this order: the
    ``preset`` (``configs/<system>/<preset>.yaml``), ``config_file``, ``settings``."""
    get_system(system)  # an unknown system is named before its presets are looked for
    overrides: dict[str, Any] = config_mod.load_yaml(preset_path(system, preset)) if preset else {}
    overrides.update(config_mod.load_yaml(config_file) if config_file else {})
    if env is not None:
        overrides["env"] = env
    overrides.update({k: v for k, v in settings.items() if v is not None})
    base = None
    if resume:
        if not overrides.get("run_dir"):
            raise ConfigError("--resume needs --run-dir naming the run to continue")
        saved = saved_run(read_config(Path(overrides["run_dir"])))
        if saved.get("system") != system:
            raise ConfigError(f"run dir '{overrides['run_dir']}' holds a run of {saved.get('system')}{_was(saved)}, "
                              f"not {system}: resume it with distrl train {saved.get('system')} --resume")
        base = saved
    module, run_cfg, sys_cfg = resolve_configs(system, overrides, base)
    run_cfg = system_run_defaults(module, run_cfg)
    check_env_id(run_cfg.env)
    check_tracker(run_cfg.tracker)
    spec = env_spec(run_cfg.env)
    if spec.action_mask_size and not module.LEGAL_ACTION_MASKS:
        able = ", ".join(n for n in SYSTEMS if get_system(n).LEGAL_ACTION_MASKS)
        raise ConfigError(f"{system} does not honour legal-action masks yet, and {run_cfg.env} has them; "
                          f"systems that do: {able}")
    if team_of(run_cfg.env) is not None:  # each game fills as many env slots as its team has agents
        check_team(run_cfg.env, getattr(sys_cfg, "num_envs", None))
    if run_cfg.runtime == "ray":
        require_ray()
        from distrl.runtime.backends.ray import check_reachable

        address = run_cfg.ray_address or os.environ.get("RAY_ADDRESS")
        if address:
            check_reachable(address, timeout_s=10.0)
    ctx = BuildContext(run_cfg.env, spec, run_cfg.total_steps, eval_interval_steps=run_cfg.eval_interval_steps,
                       eval_episodes=run_cfg.eval_episodes)
    program = module.build(sys_cfg, ctx)
    if run_cfg.runtime is None:
        run_cfg = dataclasses.replace(run_cfg, runtime="local" if "local" in program.runtimes else program.runtimes[0])
    run_cfg = dataclasses.replace(run_cfg, autoscale=resolve_autoscale(system, run_cfg, sys_cfg, program, overrides,
                                                                       resumed=resume))
    if run_cfg.autoscale == "on":
        run_cfg, program = autoscaled(system, module, run_cfg, sys_cfg, ctx, program)
    if run_cfg.runtime not in program.runtimes:
        raise ConfigError(f"runtime '{run_cfg.runtime}' is not supported by {system} (supported: "
                          f"{', '.join(program.runtimes)})")
    precision = resolve_precision(run_cfg.precision, resolve_device(run_cfg.device), program.placeable_learner)
    run_cfg = dataclasses.replace(run_cfg, precision=precision)
    check_learner_device(system, run_cfg, program)
    check_learners(system, run_cfg, program)
    refused = refusal(run_cfg.runtime, program, run_cfg.num_learners)
    if refused:
        raise ConfigError(f"{system}: {refused}")
    return module, run_cfg, sys_cfg, spec, program


def rounded_budget(program, run_cfg: RunConfig) -> tuple[int, str]:
    """The budget as the run will end it, and a line saying so where it differs from ``total_steps``: env steps
    arrive in whole learner batches (a synchronous system's batch of num_envs x unroll_length, SEED's and IMPALA's
    unrolls), so a run stops at the first whole batch past its budget, as Stable-Baselines3's do; with actors in
    flight (``local``, ``ray``) a little later still. ``(total_steps, "")`` where the program has no such batch."""
    channel = program.services.get(program.consumes) if program.consumes else None
    rewards = channel.spec.get("rewards") if isinstance(channel, Channel) else None
    total = run_cfg.total_steps
    if rewards is None or len(rewards.shape) != 2 or not total:
        return total, ""
    unit = channel.batch * rewards.shape[0] * rewards.shape[1] * run_cfg.num_learners
    rounded = -(-total // unit) * unit
    if rounded == total:
        return total, ""
    return rounded, (f"budget {total:,} env steps, rounded up to whole batches of {unit:,}: {rounded:,}"
                     + ("" if run_cfg.runtime == "inline" else " or a little more (actors in flight)"))


def _was(saved: dict) -> str:
    """`` (saved as a2c by distrl 0.2, ...)`` for a run saved under its system's former name, else nothing."""
    if "saved_as" not in saved:
        return ""
    return (f" (saved as {saved['saved_as']} by distrl 0.2, when {saved['saved_as']} ran {saved['system']}'s "
            "update)")


def make_trainer(system: str, env: str | None = None, *, config_file: str | None = None, resume: bool = False,
                 force: bool = False, progress: bool = False, token: str | None = None, preset: str | None = None,
                 shared: dict | None = None, **settings: Any) -> Trainer:
    """A run you step yourself (same arguments as :func:`train`): ``trainer.start()``, then
    ``trainer.step(env_steps=...)`` or ``trainer.step(updates=...)``, ``trainer.stats()``,
    ``trainer.set_hyperparameters(lr=...)`` (the one mutation point), ``trainer.pause()``,
    ``trainer.checkpoint()``, and ``trainer.close()``, which returns the summary. Every input is checked before
    anything is written. ``token`` (or ``DISTRL_TOKEN``; by default a new random one) is the secret peers that
    connect over the network must present; it is written to ``<run_dir>/token`` (0600), never to ``config.yaml``.
    ``shared`` gives the run's components services its controller shares among several runs (a league's coordinator:
    ``runtime.backends.share``), by name."""
    module, run_cfg, sys_cfg, spec, program = plan_run(system, env, config_file=config_file, resume=resume,
                                                       preset=preset, **settings)
    check_shared_memory(system, run_cfg, program)  # where the run starts: a plan (PBT's, the bench's) needs none
    run_dir = Path(run_cfg.run_dir) if run_cfg.run_dir else default_run_dir(system, run_cfg.env)
    prepare_run_dir(run_dir, resume=resume, force=force)
    run_cfg = dataclasses.replace(run_cfg, run_dir=str(run_dir))
    identity = {"system": system, "env": env_identity(run_cfg.env), "observation_space": repr(spec.observation_space),
                "action_space": repr(spec.action_space)}
    setup_compute(run_cfg.torch_threads)
    torch.manual_seed(run_cfg.seed)
    np.random.seed(run_cfg.seed)
    total, note = rounded_budget(program, run_cfg)
    observers = (MetricsObserver(run_dir), CheckpointObserver(run_cfg.checkpoint_interval_s),
                 ProgressObserver(total, f"{system} {run_cfg.env}", enabled=progress, note=note))
    elastic = [r for r in program.roles if r.active is not None]
    if elastic:  # first: its actors column joins each metrics row before the writers see it
        observers = (Autoscaler(elastic[0].name, run_cfg.min_actors, run_cfg.max_actors, elastic[0].active,
                                warm_up=bool(program.learner_uses)), *observers)
    tracker = tracker_observer(run_cfg.tracker, run_dir, config_data(system, run_cfg, sys_cfg),
                               run_cfg.tracker_project, run_cfg.tracker_uri)
    if tracker is not None:  # after the metrics writer: it closes metrics.csv first, and the curves come from it
        observers += (tracker,)
    # config.yaml is (re)written only once the services, the learner and a resumed checkpoint have loaded:
    # a command that fails before that leaves the run dir as it was
    token = token or os.environ.get("DISTRL_TOKEN") or secrets.token_urlsafe(24)

    def ready() -> None:
        write_config(run_dir, system, run_cfg, sys_cfg)
        write_token(run_dir, token)

    # a run saved under the system's former name (distrl 0.2's a2c and impala): its checkpoints say that name, also
    # after its config.yaml was migrated (a resume that wrote no checkpoint of its own leaves only those)
    former = FORMER_NAMES.get(system) if resume else None
    return Trainer(program, run_cfg, run_dir, system=system, resume=resume, observers=observers, identity=identity,
                   former_identity={"system": former} if former else None, on_ready=ready, token=token,
                   shared=shared)


def train_league(system: str, env: str | None = None, **options: Any) -> dict[str, Any]:
    """Train a self-play league of ``system`` in a game of two or more players (``distrl league``): learning players
    whose opponents a coordinator chooses each episode; returns the league's summary. ``options``: ``players``
    (``"main=1,main_exploiter=1"``), ``fixed`` (``"random"``), ``fixed_share`` (the share of games against a fixed
    player), ``mode`` (naive, uniform, pfsp), ``snapshot_rule``,
    ``snapshot_steps``, ``slice_steps``, ``total_steps`` (per player), ``runtime`` (local, ray),
    ``player_runtime``, ``seed``, ``run_dir``, ``resume``, ``force``, ``bind``, ``settings`` (a dict of any
    setting of every player), ``log`` (a function of one line)."""
    from distrl.league.run import run_league

    return run_league(system, env, **options)


def write_token(run_dir: Path, token: str) -> None:
    """The run's secret, readable by its owner only (0600): what ``distrl join --token-file`` reads."""
    path = run_dir / "token"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(token + "\n")
    os.chmod(path, 0o600)


def require_ray() -> None:
    """``--runtime ray`` without Ray installed: one line naming the install, before anything is written."""
    try:
        import ray  # noqa: F401
    except ImportError:
        raise ConfigError("--runtime ray needs Ray, which is not installed: pip install -e '.[ray]' (from a clone) "
                          "or pip install 'distrl[ray]'") from None


SNAPSHOTS = ("best", "last")


class Policy:
    """A trained policy loaded from a run dir: ``policy.act(obs)`` returns the greedy action.

    ``snapshot``: ``best`` plays the weights the run's periodic evaluation scored highest (``run_dir/best``, kept
    where periodic evaluation ran: R2D2 and SEED + R2D2 by default), ``last`` the newest loadable checkpoint's; by
    default the best where the run kept one, else the last. ``self.snapshot`` says which was loaded."""

    def __init__(self, run_dir: str | Path, snapshot: str | None = None):
        if snapshot not in (None, *SNAPSHOTS):
            raise ConfigError(f"snapshot must be one of {', '.join(SNAPSHOTS)}; got {snapshot!r}")
        self.run_dir = Path(run_dir)
        saved = saved_run(read_config(self.run_dir))
        self.system = saved["system"]
        former = {"system": FORMER_NAMES[self.system]} if self.system in FORMER_NAMES else None
        module, run_cfg, sys_cfg = resolve_configs(self.system, {}, saved)
        self.env_id = run_cfg.env
        self.spec = env_spec(self.env_id)
        self.model = module.make_model(self.spec, sys_cfg)
        self.best = read_best(self.run_dir)
        if snapshot == "best" and self.best is None:
            raise ConfigError(f"run dir '{run_dir}' holds no readable best policy (kept where periodic evaluation ran: "
                              "--set eval_interval_steps=N); --snapshot last plays its last checkpoint")
        self.snapshot = "best" if self.best is not None and snapshot != "last" else "last"
        source = self.run_dir / "best" / self.best["weights"] if self.snapshot == "best" \
            else latest_checkpoint(self.run_dir / "checkpoints")
        if source is None:
            raise ConfigError(f"run dir '{run_dir}' has no loadable checkpoint (yet)")
        try:
            if self.snapshot == "best":
                load_flat(self.model.parameters(), load_best_weights(self.run_dir, self.best))
            else:
                counters = load_checkpoint(source, {"model": self.model})
        except Exception as e:  # damaged files, or weights of another system or env
            first = str(e).strip().splitlines()[0][:200] if str(e).strip() else type(e).__name__
            hint = "; --snapshot last plays the last checkpoint" if self.snapshot == "best" else ""
            raise ConfigError(f"{source} cannot be loaded into a {self.system} model for {self.env_id} "
                              f"({first}){hint}") from None
        if self.snapshot == "last":  # the counters resume trusts only once checked; a policy is read no more trustingly
            check_counters(counters, {"system": self.system, "env": env_identity(self.env_id)}, source, former)
            if not all_finite(self.model.parameters()):
                raise ConfigError(f"{source} holds weights that are NaN or inf: no policy to play")
        self.model.eval()
        space = self.spec.action_space
        self._clip = (space.low, space.high) if self.spec.continuous else None

    def reset(self) -> None:
        """Call at the start of every episode: a recurrent policy (R2D2) forgets its state; others have none."""
        reset_state = getattr(self.model, "reset_state", None)
        if reset_state is not None:
            reset_state()

    def act(self, obs) -> np.ndarray:
        """The greedy action for one observation (a recurrent policy carries its state from call to call)."""
        with torch.inference_mode():
            x = torch.as_tensor(np.asarray(obs)).unsqueeze(0)
            a = self.model.greedy(x)[0].numpy()
        return np.clip(a, *self._clip) if self._clip is not None else a


def load_policy(run_dir: str | Path, snapshot: str | None = None) -> Policy:
    """A run's greedy policy: ``policy.act(observation)`` returns an action. ``snapshot``: ``best`` (the weights its
    periodic evaluation scored highest, kept where one ran: R2D2 and SEED + R2D2 by default) or ``last`` (its latest
    checkpoint); by default the best where kept, else the last (``policy.snapshot`` says which)."""
    return Policy(run_dir, snapshot)


def export(run_dir: str | Path, format: str = "onnx", out: str | Path | None = None, head: str = "greedy",
           snapshot: str | None = None, force: bool = False) -> dict[str, Any]:
    """Write a run's acting policy as ONNX (``format="onnx"``) or TorchScript (``"torchscript"``) to ``out`` (default
    ``RUN_DIR/policy.onnx`` or ``policy.pt``): a batch of observations in, actions out (recurrent policies take and
    return their state; ``head="sample"`` draws from an actor-critic's distribution). The file is run before it
    appears and must give the policy network's outputs on a batch of observations; ONNX needs ``pip install
    'distrl[export]'``."""
    from distrl.deploy import FORMATS, acting_graph, write

    if format not in FORMATS:
        raise ConfigError(f"--format must be one of {', '.join(FORMATS)}; got {format!r}")
    policy = load_policy(run_dir, snapshot)
    graph = acting_graph(policy, head)
    path = write(graph, format, Path(out) if out is not None else Path(run_dir) / f"policy{FORMATS[format]}", force)
    return {
        "out": str(path),
        "format": format,
        "system": policy.system,
        "head": head,
        "snapshot": policy.snapshot,
        "inputs": {k: [["batch", *v.shape[1:]], str(v.dtype).removeprefix("torch.")] for k, v in graph.inputs.items()},
        "outputs": graph.outputs,
    }


def serve(run_dir: str | Path, bind: str = "127.0.0.1:8500", http: str | None = "127.0.0.1:8501",
          token: str | None = None, head: str = "greedy", snapshot: str | None = None, tls_cert: str | None = None,
          tls_key: str | None = None, max_batch: int = 256, max_wait_ms: float = 0.0):
    """Serve a run's policy to simulators outside Python: gRPC at ``bind`` (:class:`PolicyClient` speaks it) and
    HTTP/JSON at ``http`` (None: no HTTP; ``POST /v1/act`` with ``Authorization: Bearer TOKEN``), admitting only
    ``token`` (default: ``DISTRL_TOKEN``, else the run's own ``RUN_DIR/token``). ``head`` and ``snapshot`` as in
    :func:`export`; ``tls_cert``/``tls_key`` (PEM files) make both TLS; requests are batched (up to ``max_batch``,
    waiting ``max_wait_ms`` for more). Returns the running server (``.address``, ``.http_address``); ``.close()``
    stops it."""
    from distrl.deploy.server import PolicyServer, run_token, tls_files

    if max_batch < 1 or not 0 <= max_wait_ms <= 1000:
        raise ConfigError(f"--max-batch must be >= 1 and --max-wait-ms in [0, 1000]; got {max_batch}, {max_wait_ms}")
    tls = tls_files(tls_cert, tls_key)
    policy = load_policy(run_dir, snapshot)
    return PolicyServer(policy, run_token(Path(run_dir), token or os.environ.get("DISTRL_TOKEN")), bind=bind, http=http,
                        head=head, tls=tls, max_batch=max_batch, max_wait_s=max_wait_ms / 1000)


def record(out: str | Path, run_dir: str | Path | None = None, policy: str | None = None, env: str | None = None,
           episodes: int = 10, seed: int = 0, force: bool = False, noise: float = 0.0,
           snapshot: str | None = None) -> dict[str, Any]:
    """Record demonstrations as a Minari dataset in ``out``: a trained run's greedy policy (``run_dir``; which of its
    weights, ``snapshot``, as in :func:`load_policy`), or a
    scripted one (``policy="module:function"`` from a batch of observations to actions, on ``env``); ``noise``
    perturbs its actions (Gaussian, a fraction of the half-range, on Box actions; a random-action chance on
    discrete ones). Returns the episodes, steps and returns recorded; ``out`` then serves as ``demos`` (R2D3,
    Ape-X) or as QT-Opt's ``offline`` data."""
    from distrl.datasets import record_episodes, write_episodes
    from distrl.datasets.minari_io import check_out
    from distrl.datasets.record import batch_policy, scripted_policy

    if (run_dir is None) == (policy is None):
        raise ConfigError("record needs a RUN_DIR (a trained run's policy) or --policy module:function with --env, not "
                          "both")
    if snapshot is not None and run_dir is None:
        raise ConfigError("--snapshot goes with a RUN_DIR (which of its weights play); a scripted --policy has none")
    check_out(out, force, keep=(run_dir,) if run_dir is not None else ())  # before minutes of recording
    if policy is not None:
        if env is None:
            raise ConfigError("--policy needs --env (the env to record on)")
        scripted = scripted_policy(policy)  # one with memory has a reset(), called at every episode start
        act, reset, env_id = batch_policy(scripted), getattr(scripted, "reset", None), env
        algorithm = f"scripted:{policy}"
    else:
        if env is not None:
            raise ConfigError("--env goes with --policy; a run records on its own env")
        trained = load_policy(run_dir, snapshot)
        act, reset, env_id = trained.act, trained.reset, trained.env_id
        algorithm = f"distrl:{trained.system} greedy ({Path(run_dir).name}, {trained.snapshot} weights)"
    eps = record_episodes(env_id, act, episodes, seed, reset, noise=noise)
    if noise:
        algorithm += f" with noise {noise}"
    folder = write_episodes(out, eps, algorithm, force=force)
    returns = eps.returns()
    return {
        "out": str(folder),
        "episodes": len(eps),
        "steps": eps.steps,
        "mean_return": round(float(returns.mean()), 6),
        "min_return": float(returns.min()),
        "max_return": float(returns.max()),
    }


def _evaluate_team(policy: Policy, episodes: int, seed: int, video: bool, opponent: str | None) -> dict[str, Any]:
    """A team's policy (``?team=``) plays every agent of its team in each game (``envs/teams.py``); an episode's
    return is the team's agents' returns averaged."""
    from distrl.envs.opponents import opponent as fixed_player
    from distrl.envs.teams import play_team

    if video:
        raise ConfigError(f"--video films one env; {policy.env_id} is a team's game, played by several agents at "
                          "once: evaluate it without --video")
    others = None if opponent in (None, "random") else fixed_player(opponent, policy.env_id, seed)
    return {**_returns(play_team(policy.env_id, policy.model, episodes, seed, others), policy),
            "team": team_of(policy.env_id)}


def _returns(returns: list[float], policy: Policy) -> dict[str, Any]:
    """An evaluation's returns summed up, and which weights played them."""
    # rounded: float sums of rewards carry noise in the last digits (0.9600000000000002, a std of 2.2e-16)
    result = {"mean_return": round(float(np.mean(returns)), 6), "std_return": round(float(np.std(returns)), 6),
              "min_return": round(min(returns), 6), "max_return": round(max(returns), 6), "episodes": len(returns),
              "snapshot": policy.snapshot}
    if policy.snapshot == "best":  # where the choice came from: its own evaluation, on other seeds than these
        result["best_policy"] = headline(policy.best)
    return result


def evaluate(run_dir: str | Path, episodes: int = 10, seed: int = 12345, video: bool = False,
             snapshot: str | None = None, opponent: str | None = None) -> dict[str, Any]:
    """Play ``episodes`` with a run's greedy policy (env seeds ``seed, seed+1, ...``; ``snapshot`` as in
    :func:`load_policy`); returns ``mean_return``, ``std_return``, ``min_return`` and ``max_return`` (the worst and
    the best episode), ``episodes``, ``snapshot`` (which weights played; for ``best`` also ``best_policy``: its
    evaluation's score, episodes and env steps) and, with ``video``, the path of a GIF of the first episode. In a
    game, ``opponent`` (``random``, ``minimax`` for tic-tac-toe, or ``module:function``) plays the other seats and
    ``wins``, ``draws``, ``losses`` (a return above, at or below 0) are counted, in all and per seat (``seats``: the
    first seat's, the second's, ...; the seats rotate with the episodes' seeds unless the id's ``?seat=`` keeps one)."""
    from distrl.envs.multi_agent import SeatedGame
    from distrl.envs.opponents import opponent as fixed_player

    if episodes < 1:
        raise ConfigError(f"--episodes must be >= 1; got {episodes}")
    policy = load_policy(run_dir, snapshot)
    if team_of(policy.env_id) is not None:
        return _evaluate_team(policy, episodes, seed, video, opponent)
    if video:  # frames are drawn off-screen: no display needed, and none of SDL's complaints about one
        os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
    env = make_env(policy.env_id, render_mode="rgb_array" if video else None)
    game = env.unwrapped if isinstance(env.unwrapped, SeatedGame) else None
    if opponent is not None and game is None:
        env.close()
        raise ConfigError(f"--opponent goes with a game of two or more players; {policy.env_id} is not one")
    if game is not None:
        game.opponent = fixed_player(opponent or "random", policy.env_id, seed)
    returns, frames, seats = [], [], []
    for ep in range(episodes):
        obs, info = env.reset(seed=seed + ep)
        seats.append(info.get("seat"))
        policy.reset()
        done, total = False, 0.0
        while not done:
            if video and ep == 0:
                frames.append(env.render())
            obs, reward, terminated, truncated, _ = env.step(policy.act(obs))
            total += float(reward)
            done = terminated or truncated
        returns.append(total)
    env.close()
    result = _returns(returns, policy)
    if game is not None:
        def outcomes(rs: list[float]) -> dict[str, int]:
            return {"wins": sum(r > 0 for r in rs), "draws": sum(r == 0 for r in rs), "losses": sum(r < 0 for r in rs)}

        result.update(opponent=opponent or "random", **outcomes(returns),
                      seats=[outcomes([r for r, s in zip(returns, seats) if s == seat])
                             for seat in range(len(game.game.possible_agents))])
    if video and frames:
        result["video"] = str(_write_gif(Path(run_dir) / "videos" / "eval-episode-0.gif", frames))
    return result


def _write_gif(path: Path, frames: list[np.ndarray]) -> Path:
    from PIL import Image

    path.parent.mkdir(parents=True, exist_ok=True)
    images = [Image.fromarray(f) for f in frames[::2]]
    images[0].save(path, save_all=True, append_images=images[1:], duration=40, loop=0)
    return path


def join(address: str, timeout_s: float = 30.0, token: str | None = None, env: str | None = None,
         tls_ca: str | None = None) -> None:
    """Run one env actor for the SEED inference server at ``address`` (``HOST:PORT``) until it stops.

    ``token`` is the run's secret (printed by the server, in its run dir's ``token`` file, or
    ``DISTRL_TOKEN``). The server's handshake says which env, how many copies and which seed; an env id
    that would import a module (``module:EnvId``) is accepted only if ``env`` names the same one, so a
    server can never make this machine import code it did not choose. ``tls_ca`` (a PEM file: the
    server's ``tls_cert`` or its authority) makes the stream TLS. Bad addresses, wrong tokens and full
    servers are one-line errors.
    """
    import grpc

    from distrl.agents.common.env_actor import EnvActor
    from distrl.config import split_address
    from distrl.runtime.services.inference.client import run_env_actor
    from distrl.runtime.services.inference.grpc import GrpcLink

    if split_address(address) is None:
        raise ConfigError(f"join address '{address}' is not HOST:PORT (e.g. 10.0.0.5:50051)")
    token = token or os.environ.get("DISTRL_TOKEN") or ""
    ca = None
    if tls_ca:
        try:
            with open(tls_ca, "rb") as f:
                ca = f.read()
        except OSError as e:
            raise ConfigError(f"cannot read --tls-ca '{tls_ca}': {e.strerror}") from None
    try:
        link = GrpcLink(address, timeout_s=timeout_s, token=token, ca=ca)
    except grpc.FutureTimeoutError:
        raise ConfigError(f"no SEED server answered at {address} within {timeout_s:g}s "
                          "(is it running with --set bind=HOST:PORT and --set remote_actors=N? "
                          "A TLS server needs --tls-ca, a plain one must not get it)") from None
    except grpc.RpcError as e:
        hint = " (pass the run's --token)" if e.code() == grpc.StatusCode.UNAUTHENTICATED else ""
        raise ConfigError(f"the SEED server at {address} refused the actor: {e.details()}{hint}") from None
    cfg = link.config
    env_id = cfg["env_id"]
    if (":" in env_id or env is not None) and env != env_id:
        link.close()
        raise ConfigError(f"the server runs env '{env_id}'; join it only with --env {env_id} "
                          "(an env id that names a module imports that module here)")
    actor = EnvActor(env_id, cfg["num_envs"], cfg["seed"], whole_games=bool(cfg.get("whole_games", False)))
    print(f"distrl: joined {address} as actor slot {cfg['slot']} ({cfg['num_envs']} x {env_id})", flush=True)
    try:
        run_env_actor(actor, link)
    finally:
        link.close()
        actor.close()
