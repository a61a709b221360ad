"""distrl: distributed deep reinforcement learning on one component model.

    import distrl
    summary = distrl.train("ppo", env="CartPole-v1", total_steps=200_000)
    policy = distrl.load_policy(summary["run_dir"])
    print(distrl.evaluate(summary["run_dir"], episodes=10))

The rest of the Python API: ``make_trainer`` (a run to step yourself), ``record``, ``export``, ``serve``,
``train_league``, ``join`` and ``PolicyClient``. Importing distrl is cheap: torch, Gymnasium and the runtime load on
the first call.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

__version__ = "0.2.0"


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
    from distrl.api import train as _train

    return _train(system, env, config_file=config_file, resume=resume, force=force, progress=progress, token=token,
                  preset=preset, **settings)


def make_trainer(system: str, env: str | None = None, **settings: Any):
    """A run you step yourself (same arguments as :func:`train`): ``trainer.start()``, then
    ``trainer.step(env_steps=...)`` or ``trainer.step(updates=...)``, ``trainer.stats()``,
    ``trainer.set_hyperparameters(lr=...)`` (the one mutation point), ``trainer.pause()``,
    ``trainer.checkpoint()``, and ``trainer.close()``, which returns the summary."""
    from distrl.api import make_trainer as _make

    return _make(system, env, **settings)


def load_policy(run_dir: str | Path, snapshot: str | None = None):
    """A run's greedy policy: ``policy.act(observation)`` returns an action. ``snapshot``: ``best`` (the weights its
    periodic evaluation scored highest, kept where one ran: R2D2 and SEED + R2D2 by default) or ``last`` (its latest
    checkpoint); by default the best where kept, else the last (``policy.snapshot`` says which)."""
    from distrl.api import load_policy as _load

    return _load(run_dir, snapshot)


def evaluate(run_dir: str | Path, episodes: int = 10, seed: int = 12345, video: bool = False,
             snapshot: str | None = None, opponent: str | None = None) -> dict[str, Any]:
    """Play ``episodes`` with a run's greedy policy (env seeds ``seed, seed+1, ...``; ``snapshot`` as in
    :func:`load_policy`); returns ``mean_return``, ``std_return``, ``min_return`` and ``max_return`` (the worst and
    the best episode), ``episodes``, ``snapshot`` (which weights played; for ``best`` also ``best_policy``: its
    evaluation's score, episodes and env steps) and, with ``video``, the path of a GIF of the first episode. In a
    two-player game, ``opponent`` (``random``, ``minimax`` for tic-tac-toe, or ``module:function``) plays the other
    seat and ``wins``, ``draws``, ``losses`` are counted."""
    from distrl.api import evaluate as _evaluate

    return _evaluate(run_dir, episodes, seed=seed, video=video, snapshot=snapshot, opponent=opponent)


def record(out: str | Path, run_dir: str | Path | None = None, policy: str | None = None, env: str | None = None,
           episodes: int = 10, seed: int = 0, force: bool = False, noise: float = 0.0,
           snapshot: str | None = None) -> dict[str, Any]:
    """Record demonstrations as a Minari dataset in ``out``: a trained run's greedy policy (``run_dir``; which of its
    weights, ``snapshot``, as in :func:`load_policy`), or a
    scripted one (``policy="module:function"`` from a batch of observations to actions, on ``env``); ``noise``
    perturbs its actions (Gaussian, a fraction of the half-range, on Box actions; a random-action chance on
    discrete ones). Returns the episodes, steps and returns recorded; ``out`` then serves as ``demos`` (R2D3,
    Ape-X) or as QT-Opt's ``offline`` data."""
    from distrl.api import record as _record

    return _record(out, run_dir=run_dir, policy=policy, env=env, episodes=episodes, seed=seed, force=force,
                   noise=noise, snapshot=snapshot)


def export(run_dir: str | Path, format: str = "onnx", out: str | Path | None = None, head: str = "greedy",
           snapshot: str | None = None, force: bool = False) -> dict[str, Any]:
    """Write a run's acting policy as ONNX (``format="onnx"``) or TorchScript (``"torchscript"``) to ``out`` (default
    ``RUN_DIR/policy.onnx`` or ``policy.pt``): a batch of observations in, actions out (recurrent policies take and
    return their state; ``head="sample"`` draws from an actor-critic's distribution). The file is run before it
    appears and must give the policy network's outputs on a batch of observations; ONNX needs ``pip install
    'distrl[export]'``."""
    from distrl.api import export as _export

    return _export(run_dir, format, out, head=head, snapshot=snapshot, force=force)


def serve(run_dir: str | Path, bind: str = "127.0.0.1:8500", http: str | None = "127.0.0.1:8501",
          token: str | None = None, **options: Any):
    """Serve a run's policy to simulators outside Python: gRPC at ``bind`` (:class:`PolicyClient` speaks it) and
    HTTP/JSON at ``http`` (``POST /v1/act`` with ``Authorization: Bearer TOKEN``), admitting only the run's token.
    ``options``: ``head``, ``snapshot``, ``tls_cert``/``tls_key``, ``max_batch``, ``max_wait_ms``. Returns the
    running server; ``server.close()`` stops it."""
    from distrl.api import serve as _serve

    return _serve(run_dir, bind, http, token, **options)


def train_league(system: str, env: str | None = None, **options: Any) -> dict[str, Any]:
    """Train a self-play league of ``system`` in a two-player game (``distrl league``): learning players whose
    opponents a coordinator chooses each episode; returns the league's summary. ``options``: ``players``
    (``"main=1,main_exploiter=1"``), ``fixed`` (``"random"``), ``mode`` (naive, uniform, pfsp), ``snapshot_rule``,
    ``snapshot_steps``, ``slice_steps``, ``total_steps`` (per player), ``runtime`` (local, ray),
    ``player_runtime``, ``seed``, ``run_dir``, ``resume``, ``force``, ``bind``, ``settings`` (a dict of any
    setting of every player), ``log`` (a function of one line)."""
    from distrl.league.run import run_league

    return run_league(system, env, **options)


def __getattr__(name: str):
    """``distrl.PolicyClient`` (the gRPC client of ``distrl serve``), imported on first use."""
    if name == "PolicyClient":
        from distrl.deploy.client import PolicyClient

        return PolicyClient
    raise AttributeError(f"module 'distrl' has no attribute {name!r}")


def join(address: str, timeout_s: float = 30.0, token: str | None = None, env: str | None = None,
         tls_ca: str | None = None) -> None:
    """Run an env actor for the SEED server at ``HOST:PORT`` (with the run's ``token``; ``tls_ca``, the
    server's PEM certificate, for a TLS server) until the server stops."""
    from distrl.api import join as _join

    _join(address, timeout_s, token=token, env=env, tls_ca=tls_ca)


__all__ = ["PolicyClient", "__version__", "evaluate", "export", "join", "load_policy", "make_trainer", "record",
           "serve", "train", "train_league"]
