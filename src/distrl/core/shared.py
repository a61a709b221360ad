"""The shared services this process can reach, by name: what a component's env finds a league's coordinator by.

A controller hosts a service (``runtime/backends/*.share``) and gives its programs the handle under a name (a league's
is its folder, which the players' env ids carry: ``?league=DIR``). Each backend registers a program's handles in
every process it makes components in, before it makes them, and releases them when it closes, so code that only
knows the name (an env built from its id) can reach the service wherever its runtime placed it. Several programs in
one process (a league's inline players) hold the same name: it stays until the last releases it, or the controller
forgets it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from distrl.core.protocols import SharedHandle
from distrl.errors import ConfigError

_handles: dict[str, tuple[SharedHandle, int]] = {}  # name -> (handle, programs holding it in this process)


def register(handles: Mapping[str, SharedHandle]) -> None:
    for name, handle in handles.items():
        held, count = _handles.get(name, (None, 0))
        _handles[name] = (handle, count + 1 if held is handle else 1)


def release(names: Iterable[str]) -> None:
    """A program that registered these is done with them."""
    for name in names:
        if name in _handles:
            handle, count = _handles[name]
            if count > 1:
                _handles[name] = (handle, count - 1)
            else:
                del _handles[name]


def forget(name: str) -> None:
    """The controller is done with it: a later lookup in this process fails in one line."""
    _handles.pop(name, None)


def handle(name: str) -> SharedHandle:
    try:
        return _handles[name][0]
    except KeyError:
        raise ConfigError(f"no shared service {name!r} in this process: it is reached only from a program its "
                          "controller runs (a league's games, while 'distrl league' runs)") from None
