"""The shared services this process can reach, by name: what a component's env finds a league's coordinator by.

A controller hosts a service (``runtime/backends/*.share``) and gives its programs the handle under a name (a league's
is its folder, which the players' env ids carry: ``?league=DIR``). Each backend registers a program's handles in
every process it makes components in, before it makes them, so code that only knows the name (an env built from its
id) can reach the service wherever its runtime placed it.
"""

from __future__ import annotations

from collections.abc import Mapping

from distrl.core.protocols import SharedHandle
from distrl.errors import ConfigError

_handles: dict[str, SharedHandle] = {}


def register(handles: Mapping[str, SharedHandle]) -> None:
    _handles.update(handles)


def forget(name: str) -> None:
    """The controller is done with it: a later lookup in this process fails in one line."""
    _handles.pop(name, None)


def handle(name: str) -> SharedHandle:
    try:
        return _handles[name]
    except KeyError:
        raise ConfigError(f"no shared service {name!r} in this process: it is reached only from a program its "
                          "controller runs (a league's games, while 'distrl league' runs)") from None
