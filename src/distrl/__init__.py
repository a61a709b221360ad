"""distrl: distributed deep reinforcement learning on one component model.

    import distrl
    summary = distrl.train("a2c", env="CartPole-v1", total_steps=500_000, runtime="inline")
    policy = distrl.load_policy(summary["run_dir"]); action = policy.act(obs)
"""

__version__ = "0.1.0"


def train(*args, **kwargs):
    from distrl.api import train as _train

    return _train(*args, **kwargs)


def load_policy(run_dir):
    from distrl.api import load_policy as _load

    return _load(run_dir)


def evaluate(run_dir, episodes: int = 10, **kwargs):
    from distrl.api import evaluate as _evaluate

    return _evaluate(run_dir, episodes, **kwargs)


def join(address: str, timeout_s: float = 30.0) -> None:
    """Run an env actor for the SEED server at ``HOST:PORT`` until the server stops."""
    from distrl.api import join as _join

    _join(address, timeout_s)


__all__ = ["__version__", "evaluate", "join", "load_policy", "train"]
