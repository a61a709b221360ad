"""Presets: named YAML files of settings for one system, ``configs/<system>/<name>.yaml`` (the repository's
``configs/`` is ``src/distrl/configs/``, shipped with the package).

``distrl train impala --preset atari`` is ``--config configs/impala/atari.yaml``; settings given with ``--config`` or
``--set`` override the preset's. A preset's first comment line says what it is (``distrl list SYSTEM`` shows it)."""

from __future__ import annotations

from pathlib import Path

from distrl.errors import ConfigError

CONFIGS = Path(__file__).resolve().parent / "configs"


def presets(system: str) -> dict[str, str]:
    """``{name: what it is}`` for each preset of ``system``."""
    folder = CONFIGS / system
    found = {}
    for path in sorted(folder.glob("*.yaml")) if folder.is_dir() else ():
        first = next((line for line in path.read_text().splitlines() if line.strip()), "")
        found[path.stem] = first.lstrip("# ").strip() if first.startswith("#") else ""
    return found


def preset_path(system: str, name: str) -> Path:
    """The file of ``system``'s preset ``name``; one line naming the valid ones otherwise."""
    known = presets(system)
    if name not in known:
        valid = ", ".join(known) if known else "none"
        raise ConfigError(f"{system} has no preset {name!r} (valid: {valid}; a file of your own: --config FILE)")
    return CONFIGS / system / f"{name}.yaml"
