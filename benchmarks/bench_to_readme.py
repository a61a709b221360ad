"""Copy a `distrl bench` report's tables into the README, between its `<!-- bench:NAME -->` markers.

The README's benchmark figures are then the report's own rows, never retyped:

    python benchmarks/bench_to_readme.py --full benchmarks/reports/full-2026-11-27 \
        --quick benchmarks/reports/quick-2026-11-27 --beyond benchmarks/reports/beyond-value-2026-11-27 \
        benchmarks/reports/beyond-value-2026-11-27/apex-dqn-2m

Markers: `full-spread` (the full reports' spread over seeds; ``--full`` takes several folders, e.g. one system
run apart, and joins their rows: a later folder's rows replace an earlier one's for the same system, env and
runtime), `quick-cells`, `quick-peers`, `quick-ratios`
(the quick report's tables), `quick-qtopt-r2d3` (the quick report's QT-Opt and R2D3 rows), `beyond-cells`
and `beyond-spread` (the beyond suite's cells, and their spread where it has several seeds; ``--beyond`` takes
several folders, e.g. one system at a longer budget or with new defaults, and joins their rows as ``--full`` does:
the later folder's replace an earlier one's). Each report given fills its own markers;
``--qtopt-r2d3 DIR`` fills only `quick-qtopt-r2d3`, from a quick run of those two systems; ``--beyond-defaults DIR``
fills `beyond-defaults` with the cells of a beyond run of every system at its default budget.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from readme_blocks import write_blocks  # noqa: E402  (the benchmarks folder's own helper)


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


def qtopt_r2d3(cells: list[str]) -> str:
    """The cells table's header and its QT-Opt and R2D3 rows."""
    return "\n".join(cells[:2] + [c for c in cells if c.startswith(("| qt-opt ", "| r2d3 "))])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--full", nargs="+", help="full suite bench folders (e.g. one system run apart): their spread rows "
                   "in one table, in order")
    p.add_argument("--quick", help="a quick suite's bench folder (with --peers)")
    p.add_argument("--beyond", nargs="+", help="beyond suite bench folders (their rows in one table each, in order; "
                   "a later folder's rows replace an earlier one's for the same system, env and runtime)")
    p.add_argument("--qtopt-r2d3", help="a quick suite's bench folder with (at least) the qt-opt and r2d3 cells: fills "
                   "only their block (after `distrl bench --suite quick --systems qt-opt r2d3`)")
    p.add_argument("--beyond-defaults", help="a beyond suite's bench folder of every system at its default budget")
    args = p.parse_args()
    blocks = {}
    if args.full:
        blocks["full-spread"] = joined([table((Path(folder) / "report.md").read_text(), "## Spread over seeds")
                                        for folder in args.full], replace=True)
    if args.quick:
        quick = (Path(args.quick) / "report.md").read_text()
        cells = table(quick, "## Cells").splitlines()
        blocks.update({
            "quick-cells": "\n".join(cells),
            "quick-qtopt-r2d3": qtopt_r2d3(cells),
            "quick-peers": table(quick, "## Peers (same machine, same run)"),
            "quick-ratios": table(quick, "distrl's ratio to each peer"),
        })
    if args.qtopt_r2d3:
        blocks["quick-qtopt-r2d3"] = qtopt_r2d3(table((Path(args.qtopt_r2d3) / "report.md").read_text(),
                                                     "## Cells").splitlines())
    if args.beyond:
        reports = [(Path(folder) / "report.md").read_text() for folder in args.beyond]
        blocks["beyond-cells"] = joined([table(r, "## Cells") for r in reports], replace=True)
        spreads = [table(r, "## Spread over seeds") for r in reports if "## Spread over seeds" in r]
        # a report has that section only where it has several seeds
        blocks["beyond-spread"] = (joined(spreads, replace=True) if spreads
                                   else "(one seed per cell: no spread over seeds)")
    if args.beyond_defaults:
        blocks["beyond-defaults"] = table((Path(args.beyond_defaults) / "report.md").read_text(), "## Cells")
    write_blocks({f"bench:{name}": body for name, body in blocks.items()})


if __name__ == "__main__":
    main()
