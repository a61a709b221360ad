"""Typed, frozen, validated configuration.

Every setting is a dataclass field declared with :func:`setting`, which carries a one-line doc
and its valid range. The CLI flags, ``distrl list`` and YAML loading are all generated from these
declarations, so there is no second list of flags to keep in sync.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import math
import types
import typing
from pathlib import Path
from typing import Any

import yaml

from distrl.errors import ConfigError

MAX_INT = 2**31 - 1  # the largest count or size any setting takes unless it declares its own limit
MAX_LAYER = 65_536  # the widest hidden layer a ``hidden`` setting takes


def setting(default: Any, doc: str, *, low: float | None = None, high: float | None = None,
            low_open: bool = False, choices: tuple | None = None, cli: bool = False, fixed: str | None = None):
    """Declare a config field with its doc line and valid range.

    ``low``/``high`` bound numbers (``low_open`` makes the lower bound strict, e.g. a learning
    rate must be > 0); ``choices`` restricts strings; ``cli`` gives the field its own flag on
    ``distrl train`` (every field is also reachable with ``--set key=value``). ``fixed`` marks a setting
    a resumed run cannot change, and says why (what the checkpoint holds that depends on it).
    """
    meta = {"doc": doc, "low": low, "high": high, "low_open": low_open, "choices": choices, "cli": cli,
            "fixed": fixed}
    if isinstance(default, (list, dict, set)):
        raise TypeError("use tuples for sequence defaults: configs are frozen")
    return dataclasses.field(default=default, metadata=meta)


def _base_type(tp: Any) -> tuple[type, bool]:
    """Return (python type, optional) for an annotation like ``int | None``."""
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        return _base_type(args[0])[0], True
    if origin is tuple:
        return tuple, False
    return tp, False


def field_types(cls) -> dict[str, tuple[type, bool]]:
    hints = typing.get_type_hints(cls)
    return {f.name: _base_type(hints[f.name]) for f in dataclasses.fields(cls)}


def coerce(name: str, value: Any, tp: type, optional: bool, limits: str = "") -> Any:
    """Turn a string (CLI) or YAML value into the field's type, or raise ConfigError (``limits``: the field's range in
    words, said with a value that is not a finite number)."""
    if value is None or (optional and isinstance(value, str) and value.lower() in ("none", "null", "")):
        if optional:
            return None
        raise ConfigError(f"setting '{name}' needs a value of type {tp.__name__}, got none")
    given = value  # what the user wrote, for the error message
    try:
        if tp is bool:
            if isinstance(value, bool):
                return value
            text = str(value).lower()
            if text in ("1", "true", "yes", "on"):
                return True
            if text in ("0", "false", "no", "off"):
                return False
            raise ValueError
        if tp is int:
            if isinstance(value, bool):
                raise ValueError
            if isinstance(value, float) and not value.is_integer():
                raise ValueError
            if isinstance(value, str):
                value = value.replace("_", "")
                return int(float(value)) if "e" in value.lower() else int(value)
            return int(value)
        if tp is float:
            if isinstance(value, bool):
                raise ValueError
            number = float(value)
            if not math.isfinite(number):  # nan, inf, 1e400: a run would train on NaN or never log
                raise _NotFinite
            return number
        if tp is tuple:
            if isinstance(value, str):
                value = _integer_list_items(value)
            if isinstance(value, (int, float)):
                raise ValueError
            return tuple(int(v) if not isinstance(v, float) or v.is_integer() else _not_int() for v in value)
        if tp is str:
            if not isinstance(value, (str, int, float)) or isinstance(value, bool):
                raise ValueError
            return str(value)
    except _NotFinite:
        raise ConfigError(f"setting '{name}' must be a finite number {limits}".rstrip() + f"; got {value!r}") from None
    except (TypeError, ValueError, OverflowError):
        kind = "a comma-separated list of integers (brackets optional)" if tp is tuple else f"of type {tp.__name__}"
        shown = repr(given) if len(repr(given)) <= 60 else repr(given)[:57] + "..."
        raise ConfigError(f"setting '{name}' must be {kind}, got {shown}") from None
    return value


class _NotFinite(Exception):
    pass


def _integer_list_items(text: str) -> list[str]:
    """The items of ``64,64``, ``(64,64)`` or ``[64,64]``: one enclosing pair of brackets at most, none inside."""
    text = text.strip()
    if len(text) >= 2 and text[0] + text[-1] in ("()", "[]"):
        text = text[1:-1]
    if any(c in text for c in "()[]"):
        raise ValueError
    return [v for v in text.split(",") if v.strip()]


def _not_int():
    raise ValueError


def validate(cfg) -> None:
    """Check every field against its declared range; raise ConfigError naming the first bad one."""
    for f in dataclasses.fields(cfg):
        value = getattr(cfg, f.name)
        meta = f.metadata
        if value is None or not meta:
            continue
        choices = meta.get("choices")
        if choices and value not in choices:
            raise ConfigError(f"setting '{f.name}' must be one of {', '.join(map(str, choices))}; got {value!r}")
        low, high = meta.get("low"), meta.get("high")
        if isinstance(value, int) and not isinstance(value, bool) and high is None:
            high = MAX_INT  # a size or a count beyond this is a typo, not a plan (and would not fit an index)
        if isinstance(value, float) and not math.isfinite(value):
            within = f"a finite number {limits_text(meta)}".rstrip()
            raise ConfigError(f"setting '{f.name}' must be {within}; got {value}")
        if isinstance(value, tuple):
            if not value or any(v < 1 or v > MAX_LAYER for v in value):
                raise ConfigError(f"setting '{f.name}' must be one or more sizes, each from 1 to {MAX_LAYER}; got "
                                  f"{value}")
            continue
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            if low is not None and (value <= low if meta.get("low_open") else value < low):
                raise ConfigError(f"setting '{f.name}' must be {limits_text({**meta, 'high': high})}; got {value}")
            if high is not None and value > high:
                raise ConfigError(f"setting '{f.name}' must be <= {high}; got {value}")


def limits_text(meta) -> str:
    """A field's declared range in words ("> 0.0 and <= 10.0"), or "" where it declares none."""
    low, high = meta.get("low"), meta.get("high")
    parts = ([f"{'>' if meta.get('low_open') else '>='} {low}"] if low is not None else []) + \
        ([f"<= {high}"] if high is not None else [])
    return " and ".join(parts)


def unknown_setting(name: str, known: list[str]) -> ConfigError:
    close = difflib.get_close_matches(name, known, n=1)
    hint = f"; did you mean '{close[0]}'?" if close else f"; valid settings: {', '.join(sorted(known))}"
    return ConfigError(f"unknown setting '{name}'{hint}")


def build(cls, overrides: dict[str, Any], base: Any | None = None):
    """Construct ``cls`` from ``base`` (or defaults) plus ``overrides``, coercing and validating."""
    types_, fields = field_types(cls), {f.name: f for f in dataclasses.fields(cls)}
    values = dataclasses.asdict(base) if base is not None else {}
    for key, raw in overrides.items():
        if key not in types_:
            raise unknown_setting(key, list(types_))
        tp, optional = types_[key]
        values[key] = coerce(key, raw, tp, optional, limits_text(fields[key].metadata))
    cfg = cls(**values)
    validate(cfg)
    return cfg


def parse_assignments(pairs: list[str]) -> dict[str, str]:
    out = {}
    for pair in pairs:
        if "=" not in pair:
            raise ConfigError(f"--set expects key=value, got '{pair}'")
        key, value = pair.split("=", 1)
        out[key.strip().replace("-", "_")] = value.strip()
    return out


def comparable_setting(x):
    """A setting as a resumed league or population compares it with the one it saved: ``--set`` text parsed as YAML
    (as the config parses it), JSON's lists for tuples, no spaces around a list's commas (``random, minimax``)."""
    if isinstance(x, str):
        try:
            x = yaml.safe_load(x) if x.strip() else x
        except yaml.YAMLError:  # text that is no YAML value is compared as text
            pass
        if isinstance(x, str):
            return ",".join(part.strip() for part in x.split(","))
    return json.loads(json.dumps(x))


def resume_conflicts(given: dict, saved: dict, own: dict, settings: dict, switches: dict | None = None) -> list[str]:
    """What a resumed league's or population's command gives that differs from what it was started with: each as
    the command line says it, with the value it was started with (``--mode 'pfsp' (started with 'naive')``).
    ``given``/``saved``: its own arguments by name (None: not given); ``settings``/``own``: the systems' ``--set``
    values; ``switches``: a yes/no argument's flags for yes and for no, where it has them (``exploit``: ``(None,
    "--no-exploit")``); a value no flag gives is said as ``name=value`` (the Python API's)."""
    def said(key: str, value) -> str:
        if isinstance(value, bool):
            on, off = (switches or {}).get(key, (None, None))
            return (on if value else off) or f"{key}={value}"
        if key == "system":
            return f"system {value!r}"
        flag = key.replace("_", "-")
        if isinstance(value, (list, tuple)):
            return " ".join(f"--{flag} {v!r}" for v in value) or f"--{flag} (none)"
        return f"--{flag} {value!r}"

    def was(key: str) -> str:
        return f"{key}={saved.get(key)}" if isinstance(saved.get(key), bool) else repr(saved.get(key))

    out = [f"{said(k, v)} (started with {was(k)})" for k, v in given.items()
           if v is not None and comparable_setting(v) != comparable_setting(saved.get(k))]
    return out + [f"--set {k}={v} (started with {own.get(k, 'unset')})" for k, v in settings.items()
                  if comparable_setting(v) != comparable_setting(own.get(k))]


class _UniqueKeys(yaml.SafeLoader):
    """YAML's safe loader, refusing a key given twice in one mapping (PyYAML keeps the last one silently)."""

    def construct_mapping(self, node, deep=False):
        seen = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise yaml.constructor.ConstructorError(None, None, f"the key {key!r} is given twice",
                                                        key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def load_yaml(path: str | Path) -> dict[str, Any]:
    path = Path(path)
    if not path.is_file():
        hint = ""
        if len(path.parts) >= 3 and path.parts[-3] == "configs" and path.suffix == ".yaml":  # a preset's path
            hint = f" (a preset of the repository's configs/: --preset {path.stem} finds it from anywhere)"
        raise ConfigError(f"config file '{path}' does not exist{hint}")
    try:
        data = yaml.load(path.read_text(), Loader=_UniqueKeys) or {}
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        what = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise ConfigError(f"config file '{path}' is not valid YAML{where}: {what}") from None
    except (UnicodeDecodeError, OSError) as e:
        raise ConfigError(f"config file '{path}' cannot be read as text ({type(e).__name__})") from None
    if not isinstance(data, dict):
        raise ConfigError(f"config file '{path}' must hold a mapping of setting: value")
    flat: dict[str, Any] = {}
    for key, value in data.items():
        for name, v in (value.items() if isinstance(value, dict) else ((key, value),)):  # sections: run:, system:
            name = str(name).replace("-", "_")
            if name in flat:
                raise ConfigError(f"config file '{path}' gives the setting '{name}' twice (a section and the top "
                                  "level, or two sections): give it once")
            flat[name] = v
    return flat


def describe(cls) -> list[tuple[str, str, Any, str]]:
    """(name, type, default, doc) for every field: the source of ``distrl list``."""
    rows = []
    for f in dataclasses.fields(cls):
        tp, optional = field_types(cls)[f.name]
        doc, fixed = f.metadata.get("doc", ""), f.metadata.get("fixed")
        rows.append((f.name, tp.__name__ + ("?" if optional else ""), f.default,
                     doc + (f" Fixed on --resume: {fixed}." if fixed else "")))
    return rows


def split_address(text: str) -> tuple[str, int] | None:
    """``HOST:PORT`` as (host, port), or None when it is not one."""
    host, _, port = text.rpartition(":")
    if not host or not port.isdigit() or int(port) > 65535:
        return None
    return host, int(port)


def import_function(spec: str, flag: str, example: str):
    """A user's ``module:function`` (``--policy``, ``--opponent``), imported; one line naming ``flag`` if it is not."""
    import importlib

    module, _, name = spec.partition(":")
    if not module or not name:
        raise ConfigError(f"{flag} must be module:function (e.g. {example}); got '{spec}'")
    try:
        fn = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as e:
        raise ConfigError(f"cannot load {flag} '{spec}': {e}") from None
    if not callable(fn):
        raise ConfigError(f"{flag} '{spec}' is not a function")
    return fn
