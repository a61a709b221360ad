"""Copy `distrl bench` reports' tables into the docs pages, between their `<!-- bench:NAME -->` markers.

The pages' benchmark figures are then the reports' own rows, never retyped. Every block is declared in
:data:`BLOCKS` below: the reports it takes its rows from, which table of each (``cells``, ``spread``, ``peers``,
``ratios``), which systems' rows, and the name a system has now where the report was run under another (the
former ``a2c`` default is ``ppo`` now, the former ``impala`` default ``appo``). Regenerate every block with

    python benchmarks/bench_to_docs.py

or some of them with ``--only NAME ...``. Each block starts with a line naming its reports, the command that
made each one and the machine it ran on (from the report's own header). Where a block joins several reports, a
later report's rows replace an earlier one's for the same system, env and runtime (a system re-run after its
default changed).
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from doc_blocks import write_blocks  # noqa: E402  (the benchmarks folder's own helper)

REPORTS = Path(__file__).resolve().parent / "reports"

HEADINGS = {"cells": "## Cells", "spread": "## Spread over seeds", "peers": "## Peers (same machine, same run)",
            "ratios": "distrl's ratio to each peer",
            "times": "Seconds from the command's start to the first greedy evaluation at the threshold"}


def table(markdown: str, heading: str) -> str:
    """The first markdown table after ``heading``."""
    out = []
    for line in markdown.split(heading, 1)[1].splitlines():
        if line.startswith("|"):
            out.append(line)
        elif out:
            break
    return "\n".join(out)


def _key(row: str) -> tuple[str, ...]:
    """A row's system, env and runtime: the cell (or the cells over seeds) it measures."""
    return tuple(c.strip() for c in row.strip("|").split("|")[:3])


def joined(tables: list[str], replace: bool = False) -> str:
    """Tables with the same columns as one: the first one's header, every table's rows. With ``replace``, a later
    table's rows take the place of an earlier one's of the same system, env and runtime (a re-run of some systems
    after their defaults changed); without it every row stays (e.g. one system at two budgets)."""
    header = tables[0].splitlines()[:2]
    if any(t.splitlines()[0] != header[0] for t in tables):
        raise SystemExit("the reports' tables have different columns (a report rendered by older code?)")
    rows: list[str] = []
    for t in tables:
        new = t.splitlines()[2:]
        keys = {_key(r) for r in new} if replace else set()
        at = next((i for i, r in enumerate(rows) if _key(r) in keys), len(rows))
        kept = [r for r in rows if _key(r) not in keys]
        rows = kept[:at] + new + kept[at:]
    return "\n".join(header + rows)


def rows_of(markdown_table: str, systems: dict[str, str] | None) -> str:
    """The header and the rows of ``systems`` (name in the report -> name now; None: every row, as it is), each
    row's system cell given its present name."""
    lines = markdown_table.splitlines()
    if systems is None:
        return markdown_table
    out = lines[:2]
    for row in lines[2:]:
        name = row.strip("|").split("|")[0].strip()
        if name in systems:
            out.append(row.replace(f"| {name} |", f"| {systems[name]} |", 1))
    return "\n".join(out)


def provenance(folders: list[str]) -> str:
    """One line: each report, the command that made it and its machine, as its report.md's header gives them."""
    parts = []
    for folder in folders:
        head = (REPORTS / folder / "report.md").read_text().split("\n## ", 1)[0]
        command = re.search(r"^`(distrl bench[^`]*)`", head, re.M)
        machine = re.search(r"^Machine: (.*)$", head, re.M)
        parts.append(f"`benchmarks/reports/{folder}/` (`{command.group(1) if command else '?'}`; "
                     f"{machine.group(1) if machine else 'machine not recorded'})")
    return "Rendered by `python benchmarks/bench_to_docs.py` from " + "; then ".join(parts) + "."


# block name -> (table kind, [(report folder under benchmarks/reports, {system in the report: name now} or None)])
S = dict
BLOCKS: dict[str, tuple[str, list[tuple[str, dict | None]]]] = {
    # the suites, every system by its present name (the bench page)
    "full-spread": ("spread", [
        ("full-2026-11-27", S(a2c="a2c", a3c="a3c", impala="impala", es="es", **{"apex-ddpg": "apex-ddpg"},
                              r2d3="r2d3")),
        ("full-qtopt-2026-11-27", {"qt-opt": "qt-opt"}),
        ("full-a2c-1024-2026-11-28", S(a2c="ppo")),
        ("full-impala-512-2026-11-28", S(impala="appo")),
        ("full-ac-2026-11-28", S(seed="seed")),
        ("full-apex-1m-2026-11-29", {"apex-dqn": "apex-dqn"}),
        ("full-gorila-ladder-2026-11-29", S(gorila="gorila")),
        ("full-seed-r2d2-sync-2026-11-29", {"seed-r2d2": "seed-r2d2"}),
        ("full-r2d2-best-2026-11-30", S(r2d2="r2d2")),
        ("full-minibatch-512-2026-12-06", S(ppo="ppo", appo="appo", seed="seed")),
        ("full-autoscale-2026-12-07", S(appo="appo", impala="impala", seed="seed", **{"apex-dqn": "apex-dqn"})),
        ("full-appo-obs-norm-2026-12-07", S(appo="appo")),
        ("full-seed-512-2026-12-07", S(seed="seed")),
    ]),
    "beyond-spread": ("spread", [
        ("beyond-value-2026-11-27", {"apex-ddpg": "apex-ddpg", "qt-opt": "qt-opt"}),
        ("beyond-value-2026-11-27/apex-dqn-2m", {"apex-dqn": "apex-dqn"}),
        ("beyond-a2c-1024-2026-11-28", S(a2c="ppo")),
        ("beyond-impala-512-2026-11-28", S(impala="appo")),
        ("beyond-ac-2026-11-28", S(seed="seed")),
        ("beyond-gorila-128-2026-11-28", S(gorila="gorila")),
        ("beyond-r2d2-best-2026-11-30", S(r2d2="r2d2")),
        ("beyond-minibatch-512-2026-12-06", S(ppo="ppo", appo="appo", seed="seed")),
        ("beyond-ppo-3m-2026-12-06", S(ppo="ppo")),
        ("beyond-autoscale-2026-12-07", S(appo="appo", seed="seed", **{"apex-dqn": "apex-dqn"})),
        ("beyond-appo-obs-norm-2026-12-07", S(appo="appo")),
        ("beyond-appo-fused-tanh-2026-12-07", S(appo="appo")),
        ("beyond-seed-512-2026-12-07", S(seed="seed")),
    ]),
    "beyond-defaults": ("cells", [("beyond-2026-11-27", S(a2c="a2c", a3c="a3c", impala="impala"))]),
    "quick-cells": ("cells", [("quick-2026-12-07", None)]),
    "quick-peers": ("peers", [("quick-2026-12-07", None)]),
    "quick-ratios": ("times", [("quick-2026-12-07", None)]),
    # the Atari preset's learner in bfloat16 on this CPU (precision=auto): the quick suite's IMPALA cells
    "atari-cpu": ("cells", [("quick-impala-pong-bf16-2026-12-07", None)]),
    # the defaults issue's side by side: one protocol for distrl and Stable-Baselines3
    "peers-runs": ("peers", [("peers-fused-2026-12-07", None)]),
    "peers-times": ("times", [("peers-fused-2026-12-07", None)]),
    # one page per system: its full suite (CartPole, every runtime, seeds 0-2) and its beyond suite
    "ppo-full": ("spread", [("full-minibatch-512-2026-12-06", S(ppo="ppo"))]),
    "ppo-beyond": ("spread", [("beyond-ppo-3m-2026-12-06", S(ppo="ppo"))]),
    "a2c-full": ("spread", [("full-2026-11-27", S(a2c="a2c"))]),
    "a2c-beyond": ("spread", [("beyond-paper-defaults-2026-12-01", S(a2c="a2c"))]),
    # appo, impala, seed and apex-dqn autoscale by default on local and ray: their CartPole rows there and their
    # beyond suites re-run with it (2026-12-07)
    # appo normalises its observations by default since 2026-12-07: both suites re-run with it
    "appo-full": ("spread", [("full-appo-obs-norm-2026-12-07", S(appo="appo"))]),
    # and again with the fused tanh layers on the CPU (models/tanh_mlp.py): the newest, on the page
    "appo-beyond": ("spread", [("beyond-appo-fused-tanh-2026-12-07", S(appo="appo"))]),
    "impala-full": ("spread", [("full-2026-11-27", S(impala="impala")),
                               ("full-autoscale-2026-12-07", S(impala="impala"))]),
    "impala-beyond": ("spread", [("beyond-autoscale-2026-12-07", S(impala="impala"))]),
    "a3c-full": ("spread", [("full-2026-11-27", S(a3c="a3c"))]),
    "a3c-beyond": ("spread", [("beyond-paper-defaults-2026-12-01", S(a3c="a3c"))]),
    "a3c-ppo-full": ("spread", [("full-a3c-passes-2026-11-28", S(a3c="a3c"))]),
    "a3c-ppo-beyond": ("spread", [("beyond-a3c-passes-2026-11-28", S(a3c="a3c"))]),
    # seed with APPO's minibatches, learning rate and normalised observations since 2026-12-07: both suites re-run
    "seed-full": ("spread", [("full-seed-512-2026-12-07", S(seed="seed"))]),
    "seed-beyond": ("spread", [("beyond-seed-512-2026-12-07", S(seed="seed"))]),
    "apex-dqn-full": ("spread", [("full-apex-1m-2026-11-29", {"apex-dqn": "apex-dqn"}),
                                 ("full-autoscale-2026-12-07", {"apex-dqn": "apex-dqn"})]),
    "apex-dqn-beyond": ("spread", [("beyond-autoscale-2026-12-07", {"apex-dqn": "apex-dqn"})]),
    "apex-ddpg-full": ("spread", [("full-2026-11-27", {"apex-ddpg": "apex-ddpg"})]),
    "apex-ddpg-beyond": ("spread", [("beyond-value-2026-11-27", {"apex-ddpg": "apex-ddpg"})]),
    "gorila-full": ("spread", [("full-gorila-ladder-2026-11-29", S(gorila="gorila"))]),
    "gorila-beyond": ("spread", [("beyond-gorila-128-2026-11-28", S(gorila="gorila"))]),
    "es-full": ("spread", [("full-2026-11-27", S(es="es"))]),
    "r2d2-full": ("spread", [("full-r2d2-best-2026-11-30", S(r2d2="r2d2"))]),
    "r2d2-beyond": ("spread", [("beyond-r2d2-best-2026-11-30", S(r2d2="r2d2"))]),
    "seed-r2d2-full": ("spread", [("full-seed-r2d2-sync-2026-11-29", {"seed-r2d2": "seed-r2d2"})]),
    "r2d3-full": ("spread", [("full-2026-11-27", S(r2d3="r2d3"))]),
    "qt-opt-full": ("spread", [("full-qtopt-2026-11-27", {"qt-opt": "qt-opt"})]),
    "qt-opt-beyond": ("spread", [("beyond-value-2026-11-27", {"qt-opt": "qt-opt"})]),
}


def render(name: str) -> str:
    """One block's body: the provenance line, then the table joined from its reports."""
    kind, sources = BLOCKS[name]
    tables = [rows_of(table((REPORTS / folder / "report.md").read_text(), HEADINGS[kind]), systems)
              for folder, systems in sources]
    return provenance([folder for folder, _ in sources]) + "\n\n" + joined(tables, replace=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--only", nargs="+", choices=sorted(BLOCKS), metavar="NAME",
                   help="regenerate only these blocks (default: every block in BLOCKS)")
    args = p.parse_args()
    names = args.only or list(BLOCKS)
    write_blocks({f"bench:{name}": render(name) for name in names})


if __name__ == "__main__":
    main()
