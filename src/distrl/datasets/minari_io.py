"""Episodes to and from Minari's on-disk format (https://minari.farama.org: HDF5 data + metadata.json).

Minari is the field's standard for offline RL datasets (the successor of D4RL), so a dataset written here
opens with ``minari.MinariDataset(DIR / "data")`` and any Minari dataset on disk loads here. Only local
files are used: no hub is needed or reached. Minari builds datasets under its root folder named by a
dataset id; :func:`write_episodes` builds one in a temporary root next to ``out`` and renames it into
place, so a failed write leaves nothing behind.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from distrl.errors import ConfigError


@dataclass
class Episodes:
    """Whole episodes: ``observations[i]`` has one more row than ``actions[i]`` (the last observation)."""

    observations: list[np.ndarray]
    actions: list[np.ndarray]
    rewards: list[np.ndarray]
    terminations: list[np.ndarray]
    truncations: list[np.ndarray]
    env_id: str | None = None
    observation_space: object = None
    action_space: object = None
    meta: dict = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.actions)

    @property
    def steps(self) -> int:
        return int(sum(len(a) for a in self.actions))

    def returns(self) -> np.ndarray:
        return np.array([float(r.sum()) for r in self.rewards])

    def closed(self, reward_clip: float | None = None):
        """Each non-empty episode as ``(observations, actions, rewards, terminations, truncations)`` with its last
        step flagged (one that stops with neither flag is closed as truncated) and rewards clipped if asked:
        what an actor's adder expects."""
        for obs, actions, rewards, term, trunc in zip(self.observations, self.actions, self.rewards,
                                                      self.terminations, self.truncations):
            if len(actions) == 0:
                continue
            trunc = trunc.copy()
            trunc[-1] |= not term[-1]
            if reward_clip is not None:
                rewards = np.clip(rewards, -reward_clip, reward_clip)
            yield obs, actions, rewards.astype(np.float32), term, trunc


@contextlib.contextmanager
def _minari_root(path: Path):
    old = os.environ.get("MINARI_DATASETS_PATH")
    os.environ["MINARI_DATASETS_PATH"] = str(path)
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("MINARI_DATASETS_PATH", None)
        else:
            os.environ["MINARI_DATASETS_PATH"] = old


def check_out(out: str | Path, force: bool, keep: tuple = ()) -> Path:
    """``out`` as an absolute path a dataset may be written to: absent, an empty folder, or (with ``force``) a
    dataset folder this command could have written (``data/metadata.json`` and nothing else), never a folder
    holding or inside one of ``keep`` (the run recorded from). One line otherwise, before anything is recorded."""
    out = Path(out).resolve()  # Minari joins its root with relative paths again: absolute only
    for path in map(lambda p: Path(p).resolve(), keep):
        if out == path or path in out.parents or out in path.parents:
            raise ConfigError(f"--out '{out}' would overlap the run dir '{path}'; choose a folder outside it")
    if out.exists() and not out.is_dir():
        raise ConfigError(f"--out '{out}' is a file, not a folder")
    if out.exists() and any(out.iterdir()):
        if not force:
            raise ConfigError(f"'{out}' exists and is not empty; pass --force to replace it, or choose another --out")
        if {p.name for p in out.iterdir()} != {"data"} or not (out / "data" / "metadata.json").is_file():
            raise ConfigError(f"--force replaces only a dataset folder (data/metadata.json and nothing else); '{out}' "
                              "holds other files: choose another --out")
    for parent in out.parents:  # a path under a file (afile/sub) cannot be made
        if parent.exists() and not parent.is_dir():
            raise ConfigError(f"--out '{out}' is under '{parent}', which is a file")
    return out


def write_episodes(out: str | Path, episodes: Episodes, algorithm: str, force: bool = False) -> Path:
    """Write ``episodes`` as a Minari dataset folder ``out`` (holding ``data/``); ``force`` replaces one."""
    import gymnasium as gym
    import minari
    from minari.data_collector import EpisodeBuffer

    out = check_out(out, force)
    if len(episodes) == 0:
        raise ConfigError("no episodes to write (--episodes must be >= 1)")
    buffers = [EpisodeBuffer(id=i, observations=o, actions=a, rewards=r, terminations=te, truncations=tr, infos={})
               for i, (o, a, r, te, tr) in enumerate(zip(episodes.observations, episodes.actions, episodes.rewards,
                                                         episodes.terminations, episodes.truncations))]
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".distrl-record-", dir=out.parent))
    try:
        import warnings

        with _minari_root(tmp), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # Minari asks for an author, a permalink...: none for local demos
            minari.create_dataset_from_buffers("distrl/demos-v0", buffers, env=gym.spec(episodes.env_id),
                                               algorithm_name=algorithm, observation_space=episodes.observation_space,
                                               action_space=episodes.action_space, data_format="hdf5",
                                               description=f"recorded by distrl: {algorithm}")
        if out.exists():
            shutil.rmtree(out)
        (tmp / "distrl" / "demos-v0").rename(out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def _data_folder(path: str | Path) -> Path:
    p = Path(path)
    for candidate in (p / "data", p):
        if (candidate / "metadata.json").is_file():
            return candidate
    if not p.exists() and not p.is_absolute():  # a dataset id (namespace/name-v0, D4RL/door/human-v2, name-v0)
        from minari.storage.datasets_root_dir import get_dataset_path

        local = get_dataset_path(str(path))
        for candidate in (local / "data", local):
            if (candidate / "metadata.json").is_file():
                return candidate
    raise ConfigError(f"'{path}' is not a Minari dataset: expected a folder with data/metadata.json (as `distrl record "
                      f"--out` writes) or a dataset id in the local Minari root")


def load_episodes(path: str | Path) -> Episodes:
    """Every episode of the Minari dataset at ``path`` (a dataset folder, its ``data`` folder, or a local id)."""
    import minari

    folder = _data_folder(path)
    try:
        dataset = minari.MinariDataset(folder)
        spec = dataset.spec
        env_id = spec.env_spec.id if spec.env_spec is not None else None
        eps = list(dataset.iterate_episodes())
    except ConfigError:
        raise
    except Exception as e:  # a damaged file, a format this Minari cannot read
        raise ConfigError(f"cannot read the Minari dataset at '{folder}': {type(e).__name__}: {e}") from None
    if not eps:
        raise ConfigError(f"the Minari dataset at '{folder}' holds no episodes")
    for i, e in enumerate(eps):
        if not isinstance(e.observations, np.ndarray) or not isinstance(e.actions, np.ndarray):
            raise ConfigError(f"the Minari dataset at '{folder}' has dict or tuple observations/actions; distrl reads "
                              f"array spaces only")
        steps = len(e.actions)  # every array of every episode, not only the first: a later one may differ
        lengths = {"observations": len(e.observations) - 1, "rewards": len(e.rewards),
                   "terminations": len(e.terminations), "truncations": len(e.truncations)}
        wrong = {k: n for k, n in lengths.items() if n != steps}
        if wrong:
            raise ConfigError(f"the Minari dataset at '{folder}': episode {i} has {steps} actions but "
                              + ", ".join(f"{n + (k == 'observations')} {k}" for k, n in wrong.items())
                              + " (an episode of n steps has n + 1 observations and n of the rest)")
    return Episodes(
        [np.asarray(e.observations) for e in eps],
        [np.asarray(e.actions) for e in eps],
        [np.asarray(e.rewards, dtype=np.float32) for e in eps],
        [np.asarray(e.terminations, bool) for e in eps],
        [np.asarray(e.truncations, bool) for e in eps],
        env_id,
        dataset.observation_space,
        dataset.action_space,
        {"path": str(folder), "algorithm": dataset.storage.metadata.get("algorithm_name")},
    )


def check_matches(episodes: Episodes, env_id: str, env, what: str = "demos") -> None:
    """One line if the dataset (``what``: demos, offline data) was made on another env or its spaces differ from
    ``env``'s (an EnvSpec)."""
    where = episodes.meta.get("path", "the dataset")
    if episodes.env_id is not None and episodes.env_id != env_id.split(":")[-1]:
        raise ConfigError(f"{what} at '{where}' were recorded on '{episodes.env_id}', not '{env_id}'")
    for i, (obs, act) in enumerate(zip(episodes.observations, episodes.actions)):  # every episode: none is cast
        at = f" (episode {i})" if i else ""
        if obs.dtype != env.obs_dtype:
            raise ConfigError(
                f"{what} at '{where}' have {obs.dtype} observations{at}; '{env_id}' gives {env.obs_dtype}"
            )
        if tuple(obs.shape[1:]) != tuple(env.obs_shape):
            raise ConfigError(f"{what} at '{where}' have observations of shape {tuple(obs.shape[1:])}{at}; "
                              f"'{env_id}' has {tuple(env.obs_shape)}")
        if tuple(act.shape[1:]) != tuple(env.action_shape):
            raise ConfigError(f"{what} at '{where}' have actions of shape {tuple(act.shape[1:])}{at}; '{env_id}' "
                              f"has {tuple(env.action_shape)}")
        if act.dtype != episodes.actions[0].dtype:
            raise ConfigError(f"{what} at '{where}' have {act.dtype} actions{at} and {episodes.actions[0].dtype} "
                              "ones in episode 0")
    act = episodes.actions[0]
    if env.action_nvec is not None:
        nvec = np.asarray(env.action_nvec)
        if not np.issubdtype(act.dtype, np.integer) or any(len(a) and ((a < 0) | (a >= nvec)).any()
                                                          for a in episodes.actions):
            raise ConfigError(f"{what} at '{where}' have actions outside '{env_id}''s options {env.action_space}")
    elif env.discrete:
        if not np.issubdtype(act.dtype, np.integer):
            raise ConfigError(f"{what} at '{where}' have {act.dtype} actions; '{env_id}' takes integers "
                              f"0..{env.action_space.n - 1}")
        low = min(int(a.min()) for a in episodes.actions if len(a))
        high = max(int(a.max()) for a in episodes.actions if len(a))
        if low < 0 or high >= env.action_space.n:
            raise ConfigError(f"{what} at '{where}' have actions from {low} to {high}; '{env_id}' takes "
                              f"0..{env.action_space.n - 1}")
    if env.continuous:
        low, high = env.action_space.low, env.action_space.high
        outside = [a for a in episodes.actions if len(a) and ((a < low - 1e-6) | (a > high + 1e-6)).any()]
        if outside:
            raise ConfigError(f"{what} at '{where}' have actions outside the action bounds of '{env_id}' "
                              f"[{low.min()}, {high.max()}]")
    for name, arrays in (("observations", episodes.observations), ("rewards", episodes.rewards),
                         ("actions", episodes.actions)):
        if any(not np.isfinite(a).all() for a in arrays if np.issubdtype(a.dtype, np.floating)):
            raise ConfigError(f"{what} at '{where}' hold non-finite {name}")
