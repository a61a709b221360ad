"""What the policy server checks before anything reaches the policy: the token, and each observation."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from distrl.errors import ConfigError


def warn(text: str) -> None:
    print(f"distrl: serve: {text}", file=sys.stderr, flush=True)


def run_token(run_dir: Path, token: str | None) -> str:
    """The token clients must present: given, else the run's (``RUN_DIR/token``)."""
    if token:
        return token
    try:
        saved = (Path(run_dir) / "token").read_text().strip()
    except (OSError, UnicodeDecodeError):
        saved = ""
    if not saved:
        raise ConfigError(f"'{run_dir}' has no token file; give --token-file FILE (or DISTRL_TOKEN): clients must "
                          "present a token")
    return saved


class ObservationCheck:
    """One observation from the wire, as the policy takes it, or a ValueError saying what was wrong and what is
    valid: its size (raw bytes) or shape (JSON), numbers only, finite floats, integers within the dtype's range."""

    def __init__(self, shape: tuple[int, ...], dtype: np.dtype):
        self.shape, self.dtype = tuple(shape), np.dtype(dtype)
        self.nbytes = int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize
        self.what = f"{list(self.shape)} {self.dtype.name}"

    def from_bytes(self, raw: bytes | memoryview) -> np.ndarray:
        if len(raw) != self.nbytes:
            raise ValueError(f"an observation is {self.nbytes} bytes ({self.what}); got {len(raw)}")
        obs = np.frombuffer(raw, dtype=self.dtype).reshape(self.shape)
        if obs.dtype.kind == "f" and not np.isfinite(obs).all():
            raise ValueError("the observation holds NaN or inf")
        return obs

    def from_json(self, value) -> np.ndarray:
        try:
            raw = np.asarray(value)
        except (TypeError, ValueError, OverflowError):
            raw = None
        if raw is None or raw.dtype.kind not in "iuf":  # strings, booleans, nested ragged lists, huge integers
            raise ValueError(f"observation must be numbers of shape {list(self.shape)}")
        if raw.shape != self.shape:
            raise ValueError(f"observation must have shape {list(self.shape)}; got {list(raw.shape)}")
        obs = raw.astype(np.float64)
        if not np.isfinite(obs).all():
            raise ValueError("the observation holds NaN or inf")
        if self.dtype.kind in "iu":
            info = np.iinfo(self.dtype)
            if (obs != np.round(obs)).any() or obs.min() < info.min or obs.max() > info.max:
                raise ValueError(f"observation values must be integers in [{info.min}, {info.max}] ({self.dtype.name})")
        elif np.abs(obs).max(initial=0.0) > np.finfo(self.dtype).max:
            raise ValueError(f"observation values overflow {self.dtype.name}")
        return obs.astype(self.dtype)
