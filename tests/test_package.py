"""The package's front: ``import distrl`` is cheap, and the public API it names is ``distrl.api``'s, declared once."""

import subprocess
import sys


def test_the_public_api_is_declared_once_and_imported_on_first_use():
    """``distrl/__init__.py`` re-exports ``distrl.api`` (and the client) lazily: the same objects, one docstring each,
    and ``import distrl`` loads neither torch nor the runtime."""
    code = ("import sys, distrl; heavy = [m for m in ('torch', 'distrl.api', 'distrl.runtime') if m in sys.modules]; "
            "print(heavy); import distrl.api, distrl.deploy.client; "
            "assert all(getattr(distrl, n) is getattr(distrl.api, n, None) or n == 'PolicyClient' "
            "for n in distrl.__all__ if n != '__version__'); "
            "assert distrl.PolicyClient is distrl.deploy.client.PolicyClient; "
            "print(sorted(set(distrl.__all__) - set(dir(distrl))))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split("\n")[:2] == ["[]", "[]"], r.stdout
