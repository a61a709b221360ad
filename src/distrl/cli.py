"""The ``distrl`` command: train, eval, list, plot.

Flags of ``distrl train`` are generated from :class:`distrl.run_config.RunConfig` (fields marked
``cli``); every other setting, of the run or the system, is reachable with ``--set key=value``
or a YAML file. User errors print one line and exit with code 2, without a traceback.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys

from distrl.errors import ConfigError


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, exit 2, as for every other user error
        raise ConfigError(f"{message} (see 'distrl {self.prog.split()[-1]} --help')" if " " in self.prog else message)


def _build_parser() -> argparse.ArgumentParser:
    from distrl.config import field_types
    from distrl.run_config import RunConfig

    parser = _Parser(prog="distrl", description="Distributed deep RL: train, evaluate, list and plot.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    train = sub.add_parser("train", help="train a system on an env")
    train.add_argument("system", help="system name (see 'distrl list')")
    types = field_types(RunConfig)
    for f in dataclasses.fields(RunConfig):
        if f.metadata.get("cli"):
            tp, _ = types[f.name]
            train.add_argument("--" + f.name.replace("_", "-"), dest=f.name, default=None, metavar=tp.__name__.upper(),
                               help=f.metadata["doc"] + f" (default: {f.default})")
    train.add_argument("--config", dest="config_file", help="YAML file of settings (flat, or in run:/system: sections)")
    train.add_argument("--set", dest="assignments", action="append", default=[], metavar="KEY=VALUE",
                       help="any setting, repeatable (see 'distrl list')")
    train.add_argument("--resume", action="store_true", help="continue the run in --run-dir from its last checkpoint")
    train.add_argument("--force", action="store_true", help="delete an existing --run-dir and start anew")
    train.add_argument("--quiet", action="store_true", help="no progress display")

    ev = sub.add_parser("eval", help="play episodes with a trained run's greedy policy; prints one JSON line")
    ev.add_argument("run_dir")
    ev.add_argument("--episodes", type=int, default=10)
    ev.add_argument("--seed", type=int, default=12345)
    ev.add_argument("--video", action="store_true", help="also save the first episode as RUN_DIR/videos/eval-episode-0.gif")

    sub.add_parser("list", help="every system and its settings with defaults")

    join = sub.add_parser("join", help="run an env actor for a SEED server at HOST:PORT (it says what to run)")
    join.add_argument("address", metavar="HOST:PORT")
    join.add_argument("--timeout", type=float, default=30.0, help="seconds to wait for the server")

    pl = sub.add_parser("plot", help="learning curves of one or more runs as a PNG")
    pl.add_argument("run_dirs", nargs="+")
    pl.add_argument("-o", "--output", default="curves.png")
    return parser


def _cmd_train(args) -> int:
    from distrl.api import train
    from distrl.config import parse_assignments

    settings = parse_assignments(args.assignments)
    from distrl.run_config import RunConfig

    for f in dataclasses.fields(RunConfig):
        if f.metadata.get("cli") and getattr(args, f.name, None) is not None:
            settings[f.name] = getattr(args, f.name)
    summary = train(args.system, config_file=args.config_file, resume=args.resume, force=args.force,
                    progress=not args.quiet, **settings)
    print(json.dumps(summary))
    return 130 if summary.get("interrupted") else 0


def _cmd_list(args) -> int:
    from distrl.agents.registry import SYSTEMS, get_system
    from distrl.config import describe
    from distrl.run_config import RunConfig

    def show(title: str, cls) -> None:
        print(title)
        for name, tp, default, doc in describe(cls):
            print(f"  {name:<24} {tp:<6} {str(default):<14} {doc}")

    show("run settings (every system):", RunConfig)
    for name in SYSTEMS:
        module = get_system(name)
        print()
        show(f"{name}: {module.DOC}", module.Config)
    return 0


def _cmd_eval(args) -> int:
    from distrl.api import evaluate

    print(json.dumps(evaluate(args.run_dir, episodes=args.episodes, seed=args.seed, video=args.video)))
    return 0


def _cmd_plot(args) -> int:
    from distrl.plotting import plot_runs

    print(plot_runs(args.run_dirs, args.output))
    return 0


def _cmd_join(args) -> int:
    from distrl.api import join

    join(args.address, timeout_s=args.timeout)
    return 0


def main(argv: list[str] | None = None) -> int:
    try:
        args = _build_parser().parse_args(argv)
        handler = {"train": _cmd_train, "eval": _cmd_eval, "list": _cmd_list, "plot": _cmd_plot, "join": _cmd_join}[args.command]
        return handler(args)
    except ConfigError as e:
        print(f"distrl: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("distrl: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
