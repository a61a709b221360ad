"""The docs site builds with ``mkdocs build --strict``: a broken link, a page missing from the nav, or an API page
whose docstrings do not render is a failure, not a warning."""

import os
import subprocess
import sys

from tests.docs.code_blocks import ROOT


def test_mkdocs_build_strict_has_no_warning(tmp_path):
    r = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                       cwd=ROOT, capture_output=True, text=True, timeout=240,
                       env=dict(os.environ, NO_MKDOCS_2_WARNING="1"))
    assert r.returncode == 0, r.stderr[-4000:]
    log = [line for line in r.stderr.splitlines() if line.startswith(("WARNING", "ERROR"))]
    assert not log, log
    for page in ("index.html", "systems/ppo/index.html", "reference/api/index.html"):
        assert (tmp_path / "site" / page).is_file(), page
    api = (tmp_path / "site" / "reference" / "api" / "index.html").read_text()
    for name in ("train", "make_trainer", "load_policy", "evaluate", "record", "join"):
        assert f'id="distrl.{name}"' in api, name
