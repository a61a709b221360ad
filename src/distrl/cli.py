"""The ``distrl`` command: train, eval, record, export, serve, list, plot, join, pbt, league, bench.

Flags of ``distrl train`` are generated from :class:`distrl.run_config.RunConfig` (fields marked
``cli``); every other setting, of the run or the system, is reachable with ``--set key=value``
or a YAML file. User errors print one line and exit with code 2, without a traceback. A run ends
with a short summary for a person on a terminal, and with one JSON line where the output is read
by a program (a pipe or a file, or ``--json``); the progress goes to standard error, so standard output holds the
summary alone.
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import json
import os
import sys

from distrl.errors import ConfigError, RunStopped


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, exit 2, as for every other user error
        raise ConfigError(f"{message} (see 'distrl {self.prog.split()[-1]} --help')" if " " in self.prog else message)


class _Help(argparse.ArgumentDefaultsHelpFormatter):
    """Shows every option's default, once: a help text that already says its default keeps its own words
    (the run settings' parser default is None, so the generic suffix would add a wrong "(default: None)")."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if "default" in text.lower():
            return text
        if action.nargs == 0 and action.default is None:  # a switch whose None means "not given" (a resume's own)
            return f"{text} (default: off)"
        return super()._get_help_string(action)


def _with_default(doc: str, default) -> str:
    """A run setting's help: its doc, then its default unless the doc already says it in words."""
    return doc if "default" in doc.lower() else f"{doc} (default: {default})"


def _run_flags(p: argparse.ArgumentParser, settings: str, resumes: str, forces: str, quiet: str) -> None:
    """The flags ``train`` and ``pbt`` share: settings, resume/force of the run dir, output."""
    p.add_argument("--set", dest="assignments", action="append", default=[], metavar="KEY=VALUE", help=settings)
    p.add_argument("--resume", action="store_true", help=f"continue {resumes}")
    p.add_argument("--force", action="store_true", help=f"delete {forces} and start anew")
    p.add_argument("--quiet", action="store_true", help=quiet)
    p.add_argument("--json", action="store_true", help="end with the summary as one JSON line, also on a terminal")


def _seconds(text: str) -> float:
    """A finite number of seconds > 0 (``inf``, ``nan`` and ``-1`` would wait forever or not at all)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not (0 < value < 1e7):
        raise argparse.ArgumentTypeError(f"{text!r}: give a finite number of seconds > 0")
    return value


def _count(low: int):
    """An integer >= ``low`` (a seed, a count of episodes), up to 2**31 - 1 (what an env's seed takes)."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if not low <= value <= 2**31 - 1:
            raise argparse.ArgumentTypeError(f"{text!r}: give a whole number from {low} to {2**31 - 1}")
        return value

    return parse


def _build_parser() -> argparse.ArgumentParser:
    from distrl import __version__
    from distrl.agents.registry import SYSTEMS
    from distrl.config import field_types
    from distrl.run_config import RunConfig

    parser = _Parser(prog="distrl", description="Distributed deep RL: train, evaluate, list and plot.")
    parser.add_argument("--version", action="version", version=f"distrl {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    systems = ", ".join(SYSTEMS)
    train = sub.add_parser("train", help="train a system on an env", formatter_class=_Help,
                           description=f"Train a system on an env. Systems: {systems} ('distrl list' shows their "
                                       "settings).")
    train.add_argument("system", help=f"one of: {systems}")
    types = field_types(RunConfig)
    for f in dataclasses.fields(RunConfig):
        if f.metadata.get("cli"):
            tp, _ = types[f.name]
            train.add_argument("--" + f.name.replace("_", "-"), dest=f.name, default=None, metavar=tp.__name__.upper(),
                               help=_with_default(f.metadata["doc"], f.default))
    train.add_argument("--config", dest="config_file", help="YAML file of settings (flat, or in run:/system: sections)")
    train.add_argument("--preset", default=None, help="one of the system's presets, configs/SYSTEM/NAME.yaml "
                       "('distrl list SYSTEM' names them); --config and --set override it")
    _run_flags(train, "any setting, repeatable (see 'distrl list')", "the run in --run-dir from its last checkpoint",
               "an existing --run-dir", "no progress display")
    train.add_argument("--token", default=None, help="the secret network peers must present (default: DISTRL_TOKEN, "
                       "or a new random one, written to RUN_DIR/token)")

    ev = sub.add_parser("eval", help="play episodes with a trained run's greedy policy; prints one JSON line",
                        formatter_class=_Help)
    ev.add_argument("run_dirs", nargs="+", metavar="RUN_DIR",
                    help="one or more run dirs (a shell pattern matching several: one JSON line each, in order)")
    ev.add_argument("--episodes", type=_count(1), default=10, help="episodes to play")
    ev.add_argument("--seed", type=_count(0), default=12345, help="env seed of the first episode (then +1 each)")
    ev.add_argument("--video", action="store_true", help="also save the first episode as "
                                                         "RUN_DIR/videos/eval-episode-0.gif")
    ev.add_argument("--opponent", default=None, help="in a game, who plays the other seats: random "
                    "(default), minimax (tic-tac-toe's perfect player), heuristic (Connect Four's rules of thumb) or "
                    "module:function of (observation, mask)")
    ev.add_argument("--snapshot", choices=("best", "last"), default=None,
                    help="which weights play: the best periodic evaluation's (run_dir/best, kept where periodic "
                    "evaluation ran: R2D2 and SEED + R2D2 by default) or the last checkpoint's; default: best where "
                    "kept, else last")

    rec = sub.add_parser("record", help="record demonstrations as a Minari dataset: a trained run's greedy policy, "
                         "or a scripted one (--policy module:function --env ENV)", formatter_class=_Help)
    rec.add_argument("run_dir", nargs="?", default=None, help="a trained run whose greedy policy plays")
    rec.add_argument("--policy", default=None, help="module:function from a batch of observations to actions")
    rec.add_argument("--env", default=None, help="the env for --policy (a run records on its own env)")
    rec.add_argument("--episodes", type=_count(1), default=10, help="episodes to record")
    rec.add_argument("--seed", type=_count(0), default=0, help="env seed of the first episode (then +1 each)")
    rec.add_argument("--out", required=True, help="the dataset folder to write (Minari's layout: OUT/data)")
    rec.add_argument("--force", action="store_true", help="replace a non-empty --out")
    rec.add_argument("--noise", type=float, default=0.0, help="perturb each action: Gaussian noise of this fraction "
                     "of the half-range (Box), or this chance of a random action (discrete)")
    rec.add_argument("--snapshot", choices=("best", "last"), default=None,
                     help="which of RUN_DIR's weights play (as for eval); default: best where kept, else last")

    exp = sub.add_parser("export", help="write a trained run's policy as ONNX or TorchScript (checked against it); "
                         "prints one JSON line", formatter_class=_Help)
    exp.add_argument("run_dir", metavar="RUN_DIR")
    exp.add_argument("--format", choices=("onnx", "torchscript"), default="onnx", help="the file's format")
    exp.add_argument("--out", default=None, help="the file to write (default: RUN_DIR/policy.onnx or policy.pt)")
    exp.add_argument("--head", choices=("greedy", "sample"), default="greedy",
                     help="greedy actions (as eval plays), or actions drawn from the policy (actor-critic systems)")
    exp.add_argument("--snapshot", choices=("best", "last"), default=None,
                     help="which of RUN_DIR's weights (as for eval); default: best where kept, else last")
    exp.add_argument("--force", action="store_true", help="replace an existing --out")

    srv = sub.add_parser("serve", help="answer actions for simulators outside Python: a trained run's policy on "
                         "gRPC and HTTP/JSON, batched, for holders of the run's token", formatter_class=_Help)
    srv.add_argument("run_dir", metavar="RUN_DIR")
    srv.add_argument("--bind", default="127.0.0.1:8500", help="gRPC address (0.0.0.0:PORT accepts other machines)")
    srv.add_argument("--http", default="127.0.0.1:8501", help="HTTP/JSON address, or 'off'")
    srv.add_argument("--token-file", default=None, help="file holding the token clients present (default: "
                     "DISTRL_TOKEN, else RUN_DIR/token)")
    srv.add_argument("--head", choices=("greedy", "sample"), default="greedy",
                     help="greedy actions, or actions drawn from the policy (actor-critic systems)")
    srv.add_argument("--snapshot", choices=("best", "last"), default=None,
                     help="which of RUN_DIR's weights (as for eval); default: best where kept, else last")
    srv.add_argument("--tls-cert", default=None, help="PEM certificate: both routes serve TLS (with --tls-key)")
    srv.add_argument("--tls-key", default=None, help="PEM private key of --tls-cert")
    srv.add_argument("--max-batch", type=_count(1), default=256, help="most requests answered by one forward pass")
    srv.add_argument("--max-wait-ms", type=float, default=0.0,
                     help="how long the first request of a batch waits for others to join it (0: requests that "
                     "arrive during a forward pass form the next batch)")

    lst = sub.add_parser("list", help="the systems; with a name, that system's settings, defaults and presets")
    lst.add_argument("what", nargs="?", default=None, help="a system, or 'run' for the settings every system takes")

    join = sub.add_parser("join", help="run an env actor for a SEED server at HOST:PORT (it says what to run)",
                          formatter_class=_Help)
    join.add_argument("address", metavar="HOST:PORT")
    join.add_argument("--timeout", type=_seconds, default=30.0, help="seconds to wait for the server")
    join.add_argument("--token", default=None, help="the run's secret (printed by the server; default: DISTRL_TOKEN)")
    join.add_argument("--token-file", default=None, help="read the secret from this file (the run dir's 'token')")
    join.add_argument("--env", default=None, help="the env id the server runs; needed where it names a module")
    join.add_argument("--tls-ca", default=None, help="PEM certificate to check a TLS server by (its tls_cert)")

    pbt = sub.add_parser("pbt", help="population-based training of a system (exploit and explore while it trains)",
                         formatter_class=_Help,
                         description="Train a population of runs of SYSTEM; every --ready-steps env steps a member in "
                                     "the bottom --fraction copies a top member's weights, optimizer state and "
                                     "hyperparameters and perturbs them (Jaderberg et al. 2017).")
    pbt.add_argument("system", help=f"one of: {systems} (a3c and gorila learn in their workers: not these)")
    pbt.add_argument("--env", default=None, help="env id (default: the system's)")
    pbt.add_argument("--population", type=int, default=None, help="members (default: 4)")
    pbt.add_argument("--explore", action="append", default=None, metavar="SPEC",
                     help="NAME=loguniform(LOW,HIGH), NAME=uniform(LOW,HIGH) or NAME=choice(A,B,...), repeatable: "
                          "the first value of each member is drawn from it")
    pbt.add_argument(
        "--ready-steps", type=int, default=None, help="env steps a member trains between exploit/explore (default: "
                                                      "20,000)"
    )
    pbt.add_argument("--total-steps", type=_count(1), default=None,
                     help="env steps per member (default: the system's budget; with --resume: raise the budget)")
    pbt.add_argument("--runtime", default=None, help="local (members in turn on this machine; the default) or ray (one "
                                                     "Ray actor each)")
    pbt.add_argument("--member-runtime", default=None, help="each member's own runtime (default: the system's; inline "
                                                            "on ray)")
    pbt.add_argument("--fraction", type=float, default=None, help="truncation: the bottom fraction copies the top "
                                                                  "fraction (default: 0.2)")
    pbt.add_argument("--resample-prob", type=float, default=None, help="chance to redraw a value instead of "
                                                                       "perturbing it (default: 0.25)")
    pbt.add_argument("--no-exploit", action="store_true", default=None, help="ablation: never copy (explore alone)")
    pbt.add_argument("--self-play", action="store_true", default=None,
                     help="the members play each other in a game of two or more players (--env pettingzoo:GAME or "
                          "openspiel:GAME)")
    pbt.add_argument("--no-explore", action="store_true", default=None, help="ablation: copy without perturbing "
                                                                             "(exploit alone)")
    pbt.add_argument("--seed", type=_count(0), default=None, help="member i trains with seed + i (default: 0)")
    pbt.add_argument("--run-dir", default=None, help="the population's directory (default: runs/pbt-SYSTEM-ENV-TIME)")
    _run_flags(pbt, "any setting of every member, repeatable (see 'distrl list')", "the population in --run-dir",
               "an existing population in --run-dir", "no line per ready member")

    league = sub.add_parser("league", help="self-play: learning players of a system in a game of two or more "
                            "players, their "
                            "opponents chosen by a coordinator (AlphaStar's league)", formatter_class=_Help,
                            description="Train learning players of SYSTEM in a game of two or more players "
                                        "(PettingZoo's or OpenSpiel's); a "
                                        "coordinator chooses each episode's opponents, one per other seat, among "
                                        "the players and their "
                                        "frozen snapshots (naive self-play, uniform fictitious self-play or "
                                        "AlphaStar's prioritized fictitious self-play) and keeps the payoff table "
                                        "and Elo ratings.")
    league.add_argument("system", help="one whose policy honours legal-action masks and that has a learner (given "
                                       "another, the league names them: ppo, appo, apex-dqn, r2d2 and others)")
    league.add_argument("--env", default=None, help="the game: pettingzoo:GAME or openspiel:GAME (e.g. "
                                                    "pettingzoo:classic.tictactoe_v3, openspiel:kuhn_poker); no "
                                                    "default")
    league.add_argument("--players", default=None, help="KIND=COUNT,... of main, main_exploiter, league_exploiter "
                                                         "(default: main=1)")
    league.add_argument("--fixed", default=None, help="scripted players the league holds from the start, "
                                                    "comma-separated: random, minimax (tic-tac-toe), "
                                                    "heuristic (Connect Four), module:function (by default none)")
    league.add_argument("--fixed-share", type=float, default=None, help="the share of each learning player's games "
                        "against a fixed player, drawn uniformly, in any --mode (default 0: as the mode chooses)")
    league.add_argument("--mode", default=None, help="naive (self-play), uniform (over the snapshots) or pfsp "
                                                     "(AlphaStar's league; the default)")
    league.add_argument("--snapshot-rule", default=None, help="schedule (every --snapshot-steps; the default) or "
                                                              "win_rate (beats what it should > 0.7, or 2x the steps)")
    league.add_argument("--snapshot-steps", type=_count(1), default=None, help="a player's env steps between its "
                                                                                "snapshots (default: 20,000)")
    league.add_argument("--slice-steps", type=_count(1), default=None, help="env steps a player trains in its turn "
                                                                             "(default: 5,000)")
    league.add_argument("--total-steps", type=_count(1), default=None, help="env steps per learning player (default: "
                                                                            "100,000; with --resume: raise the "
                                                                            "budget)")
    league.add_argument("--runtime", default=None, help="where the players run: local (in turn on this machine; the "
                                                        "default) or ray (each a Ray actor, all at once)")
    league.add_argument("--player-runtime", default=None, help="each player's own runtime: local or inline (default: "
                                                               "the system's; inline on ray)")
    league.add_argument("--seed", type=_count(0), default=None, help="player i trains with seed + i (default: 0)")
    league.add_argument("--bind", default=None, help="where the coordinator listens for games in other processes "
                        "(HOST:PORT; by default loopback, this node's address on Ray)")
    league.add_argument("--run-dir", default=None, help="the league's directory (default: "
                                                        "runs/league-SYSTEM-GAME-TIME)")
    _run_flags(league, "any setting of every player, repeatable (see 'distrl list')", "the league in --run-dir",
               "an existing league in --run-dir", "no line per slice")

    bench = sub.add_parser("bench", help="the unified benchmark: every system's throughput against this machine's "
                           "ceiling and its time to threshold, in one run; writes report.md, report.json and plots",
                           formatter_class=_Help)
    bench.add_argument("--suite", default="quick", help="quick (one seed, each system's default runtime, 180 s cap per "
                       "cell), full (every runtime, seeds 0-2, no cap), beyond (each system's default config on "
                       "LunarLander, Pendulum and LunarLanderContinuous, a longer budget where the default is too "
                       "short; one seed, 300 s cap; needs the box2d extra) or peers (ppo, appo and seed on CartPole "
                       "and LunarLander beside Stable-Baselines3, by one protocol: implies --peers)")
    bench.add_argument("--systems", nargs="+", default=None, help="only these systems (default: all)")
    bench.add_argument("--runtimes", nargs="+", default=None, help="only these runtimes (default: the suite's)")
    bench.add_argument("--seeds", nargs="+", type=_count(0), default=None, help="replace the suite's seeds")
    bench.add_argument("--out", default=None, help="output folder (default: runs/bench-SUITE-TIME)")
    bench.add_argument(
        "--max-wall-s", type=_seconds, default=None, help="cap each cell's training at this many seconds"
    )
    bench.add_argument("--ceiling-s", type=_seconds, default=4.0, help="seconds for each ceiling measurement")
    bench.add_argument("--episodes", type=_count(1), default=20, help="greedy evaluation episodes per cell")
    bench.add_argument("--peers", action="store_true", help="also run Stable-Baselines3 A2C/DQN/PPO on CartPole-v1 "
                       "and its PPO on LunarLander-v3 where the run has cells there, at RL Zoo's settings for the "
                       "env, all by one protocol: greedy evaluations of 10 episodes every fixed number of env steps "
                       "(pip install -e '.[peers]')")
    bench.add_argument("--no-pong", action="store_true", help="leave out the Pong throughput cell")
    bench.add_argument("--resume", action="store_true", help="keep the finished cells in --out, run the rest")
    bench.add_argument("--force", action="store_true", help="replace an earlier bench in --out")
    bench.add_argument("--quiet", action="store_true", help="no progress display, no line per cell")

    pl = sub.add_parser("plot", help="learning curves of one or more runs (or a PBT population) as a PNG",
                        formatter_class=_Help)
    pl.add_argument("run_dirs", nargs="+")
    pl.add_argument("-o", "--output", default=None, help="PNG file to write (default: curves.png in the run dir; "
                    "for several runs compare.png in the working directory, so no run's own curves are replaced)")
    return parser


def _cmd_train(args) -> int:
    from distrl.api import train
    from distrl.config import parse_assignments
    from distrl.run_config import RunConfig

    settings = parse_assignments(args.assignments)
    for f in dataclasses.fields(RunConfig):
        if f.metadata.get("cli") and getattr(args, f.name, None) is not None:
            if f.name in settings:  # one of them would be dropped unchecked
                flag = "--" + f.name.replace("_", "-")
                raise ConfigError(f"setting '{f.name}' given twice, by {flag} and by --set {f.name}=...; give it once")
            settings[f.name] = getattr(args, f.name)
    summary = train(args.system, config_file=args.config_file, resume=args.resume, force=args.force,
                    progress=not args.quiet, token=args.token, preset=args.preset, **settings)
    code = 130 if summary.get("interrupted") else 0
    if sys.stdout.isatty() and not args.json:
        _say(human_summary(summary))
    else:
        _say(json.dumps(summary))
    return code


def _cmd_pbt(args) -> int:
    from distrl.config import parse_assignments
    from distrl.pbt.population import run_pbt

    summary = run_pbt(
        args.system,
        args.env,
        population=args.population,
        explore=args.explore,
        ready_steps=args.ready_steps,
        total_steps=args.total_steps,
        runtime=args.runtime,
        member_runtime=args.member_runtime,
        fraction=args.fraction,
        resample_prob=args.resample_prob,
        exploit=None if args.no_exploit is None else False,  # (None: not given, the population's own on resume)
        explore_hyperparameters=None if args.no_explore is None else False,
        seed=args.seed,
        run_dir=args.run_dir,
        resume=args.resume,
        force=args.force,
        settings=parse_assignments(args.assignments),
        self_play=args.self_play,
        log=None if args.quiet else (lambda line: print(f"distrl pbt: {line}", file=sys.stderr, flush=True)),
    )
    if sys.stdout.isatty() and not args.json:
        _say(f"{summary['system']} on {summary['env']}: {summary['population']} members, "
             f"{summary['env_steps_total']:,} env steps, {summary['exploits']} exploits; best member "
             f"{summary['best_member']} (score {summary['best_score']}, {summary['best_hyperparameters']})\n"
             f"  run dir: {summary['run_dir']}  (next: distrl eval {summary['best_run_dir']}; distrl plot "
             f"{summary['run_dir']})")
    else:
        _say(json.dumps(summary))
    return 130 if summary.get("interrupted") else 0


def _cmd_league(args) -> int:
    from distrl.config import parse_assignments
    from distrl.league.run import run_league

    summary = run_league(
        args.system, args.env, players=args.players, fixed=args.fixed, fixed_share=args.fixed_share, mode=args.mode,
        snapshot_rule=args.snapshot_rule,
        snapshot_steps=args.snapshot_steps, slice_steps=args.slice_steps, total_steps=args.total_steps,
        runtime=args.runtime, player_runtime=args.player_runtime, seed=args.seed, run_dir=args.run_dir,
        resume=args.resume, force=args.force,
        bind=args.bind, settings=parse_assignments(args.assignments),
        log=None if args.quiet else (lambda line: print(f"distrl league: {line}", file=sys.stderr, flush=True)),
    )
    if sys.stdout.isatty() and not args.json:
        main = summary["players"][0]
        n, k = len(summary["players"]), len(summary["snapshots"])
        _say(f"{summary['system']} league on {summary['env']}: {n} learning player{'s' * (n != 1)}, "
             f"{k} snapshot{'s' * (k != 1)}, {summary['games']:,} games; {main['id']} rated "
             f"{main['rating']}\n  run dir: {summary['run_dir']}  (next: distrl eval {summary['main_run_dir']} "
             "--opponent random)")
    else:
        _say(json.dumps(summary))
    return 130 if summary.get("interrupted") else 0


def _cmd_bench(args) -> int:
    import shlex
    import time

    from distrl.bench import run_bench

    out = args.out or f"runs/bench-{args.suite}-{time.strftime('%Y%m%d-%H%M%S')}"
    command = "distrl bench " + shlex.join(sys.argv[2:]) if sys.argv[1:2] == ["bench"] else ""
    log = None if args.quiet else (lambda line: print(f"distrl bench: {line}", file=sys.stderr, flush=True))
    result = run_bench(out, suite=args.suite, systems=args.systems, runtimes=args.runtimes, seeds=args.seeds,
                       max_wall_s=args.max_wall_s, ceiling_s=args.ceiling_s, eval_episodes=args.episodes,
                       peers=args.peers, resume=args.resume, force=args.force, pong=not args.no_pong,
                       progress=not args.quiet, log=log, command=command.strip())
    _say(json.dumps(result))
    return 1 if result["failed"] else 0


def autoscale_hint(s: dict) -> str | None:
    """Where a run of fixed actors starved its learner (the actors the bottleneck, over a few of the autoscaler's
    windows) and could have sized itself, say so: 2 actors on an env that waits on a simulator step a fraction of
    what more would, and nothing else tells the user."""
    from distrl.api import ELASTIC_SYSTEMS
    from distrl.runtime.run.autoscale import STARVED, WINDOW_S

    wait = s.get("learner_wait_frac")
    if (s.get("system") not in ELASTIC_SYSTEMS or s.get("runtime") not in ("local", "ray") or "autoscale" in s
            or s.get("bottleneck") != "actor-bound" or s.get("interrupted") or s.get("wall_s", 0) < 3 * WINDOW_S
            or wait is None or wait <= STARVED):
        return None
    return (f"the learner waited {wait:.0%} of its time for data: --set autoscale=on sizes the actors from this wait "
            "and keeps a change only where env steps/s rise (docs/guide/autoscale.md)")


def human_summary(s: dict) -> str:
    """What a person wants at the end of a run; the full record stays in ``summary.json``."""
    ret = "n/a" if s.get("episode_return_mean") is None else f"{s['episode_return_mean']:.1f}"
    lag = "n/a" if s.get("policy_lag_mean") is None else f"{s['policy_lag_mean']:,.1f} updates"
    if s.get("policy_lag_env_steps") is not None and s.get("policy_lag_mean"):
        lag += f" (~{s['policy_lag_env_steps']:,.0f} env steps of data)"
    lines = [f"{s['system']} on {s['env']} ({s['runtime']}): {s['env_steps']:,} env steps in {s['wall_s']:.1f} s "
             f"({s['sps']:,.0f} env steps/s){'  [interrupted]' if s.get('interrupted') else ''}",
             f"  return: {ret} (mean of the last 100 of {s['episodes']:,} episodes)",
             f"  bottleneck: {s['bottleneck']}: {s['bottleneck_detail']}",
             f"  learner updates: {s['learner_updates']:,}; policy lag: {lag}; actor restarts: {s['actor_restarts']}",
             *([f"  best evaluation: {b['eval_return_mean']:.1f} over {b.get('eval_episodes')} episodes at "
                f"~{b.get('env_steps') or 0:,} env steps (distrl eval plays it; --snapshot last: the last checkpoint)"
                + ("; its score could not be measured again on resume" if b.get("rescored") is False else "")]
               if (b := s.get("best_policy")) else []),
             *([f"  autoscale: settled at {a['why']}; {a['changes']} changes (autoscale.csv)"]
               if (a := s.get("autoscale")) else []),
             *([f"  hint: {h}"] if (h := autoscale_hint(s)) else []),
             f"  run dir: {s['run_dir']}  (next: distrl eval {s['run_dir']} --episodes 20; distrl plot {s['run_dir']})"]
    return "\n".join(lines)


def _cmd_list(args) -> int:
    from distrl.agents.registry import SYSTEMS, get_system, system_runtimes
    from distrl.config import describe
    from distrl.presets import presets
    from distrl.run_config import RunConfig

    out = []

    def show(title: str, cls) -> None:
        out.append(title)
        for name, tp, default, doc in describe(cls):
            out.append(f"  {name:<24} {tp:<6} {str(default):<14} {doc}")

    if args.what is None:
        out.append("systems ('distrl list SYSTEM' shows one's settings and presets; 'distrl list run' the run "
                   "settings every system takes):")
        out += [f"  {name:<10} {get_system(name).DOC} [actions: {', '.join(get_system(name).ACTIONS)}; runtimes: "
                f"{', '.join(system_runtimes(name))}]" for name in SYSTEMS]
    elif args.what == "run":
        show("run settings (every system):", RunConfig)
    else:
        module = get_system(args.what)
        show(f"{args.what}: {module.DOC}\n  actions: {', '.join(module.ACTIONS)}; observations: Box, or any gymnasium "
             f"flattens into one (Dict, Tuple, Discrete one-hot)\n  runtimes: {', '.join(system_runtimes(args.what))}"
             f"\n  budget: {module.DEFAULT_TOTAL_STEPS:,} env steps unless --total-steps says"
             f"\n  docs: docs/systems/{args.what}.md (in the repository)", module.Config)
        found = presets(args.what)
        out += ["", f"presets (distrl train {args.what} --preset NAME):" if found else "presets: none"]
        out += [f"  {name:<16} {what}" for name, what in found.items()]
        out += ["", "run settings: distrl list run"]
    _say("\n".join(out))
    return 0


def _cmd_eval(args) -> int:
    from distrl.api import evaluate

    for run_dir in args.run_dirs:  # each checked and played in turn: a bad one stops there, with one line
        result = evaluate(run_dir, episodes=args.episodes, seed=args.seed, video=args.video, snapshot=args.snapshot,
                          opponent=args.opponent)
        _say(json.dumps({"run_dir": run_dir, **result} if len(args.run_dirs) > 1 else result))
    return 0


def _cmd_record(args) -> int:
    from distrl.api import record

    _say(json.dumps(record(args.out, run_dir=args.run_dir, policy=args.policy, env=args.env, episodes=args.episodes,
                           seed=args.seed, force=args.force, noise=args.noise, snapshot=args.snapshot)))
    return 0


def _cmd_export(args) -> int:
    from distrl.api import export

    _say(json.dumps(export(args.run_dir, args.format, args.out, head=args.head, snapshot=args.snapshot,
                           force=args.force)))
    return 0


def _cmd_serve(args) -> int:
    import signal
    import threading

    from distrl.api import serve

    token = _token_from_file(args.token_file) if args.token_file else None
    server = serve(args.run_dir, bind=args.bind, http=None if args.http == "off" else args.http, token=token,
                   head=args.head, snapshot=args.snapshot, tls_cert=args.tls_cert, tls_key=args.tls_key,
                   max_batch=args.max_batch, max_wait_ms=args.max_wait_ms)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda *_: stop.set())
    spec = server.spec
    http = f" and http{'s' if args.tls_cert else ''}://{server.http_address}/v1/act" if server.http_address else ""
    print(f"distrl: serving {spec['system']} on {spec['env']} ({spec['snapshot']} weights, {spec['head']}) on gRPC "
          f"{server.address}{http}; clients present the run's token", file=sys.stderr, flush=True)
    try:
        while not stop.wait(0.5):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
    print(f"distrl: served {server.batcher.requests} action requests in {server.batcher.batches} batches; refused "
          f"{server.refused} without the run's token and {server.invalid} invalid", file=sys.stderr, flush=True)
    return 0


def _cmd_plot(args) -> int:
    from pathlib import Path

    from distrl.plotting import is_population, plot_population, plot_runs

    if len(args.run_dirs) == 1 and is_population(args.run_dirs[0]):
        _say(plot_population(args.run_dirs[0], args.output or str(Path(args.run_dirs[0]) / "population.png")))
        return 0
    output = args.output or (str(Path(args.run_dirs[0]) / "curves.png") if len(args.run_dirs) == 1 else "compare.png")
    _say(plot_runs(args.run_dirs, output))
    return 0


def _cmd_join(args) -> int:
    from distrl.api import join

    token = _token_from_file(args.token_file) if args.token_file else args.token
    join(args.address, timeout_s=args.timeout, token=token, env=args.env, tls_ca=args.tls_ca)
    return 0


def _token_from_file(path: str) -> str:
    try:
        with open(path, "rb") as f:
            token = f.read(4096).decode("ascii").strip()
    except OSError as e:
        raise ConfigError(f"cannot read --token-file '{path}': {e.strerror}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"--token-file '{path}' is not a token (a run's token file holds one line of "
                          "ASCII: the run dir's 'token')") from None
    if not token:
        raise ConfigError(f"--token-file '{path}' is empty (a run's token file: RUN_DIR/token)")
    return token


def _say(text: str) -> None:
    """Print, or, if whoever read our output is gone (``| head``, ``| tee`` ended by Ctrl-C), stay quiet."""
    try:
        print(text, flush=True)
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit


def main(argv: list[str] | None = None) -> int:
    try:
        args = _build_parser().parse_args(argv)
        handler = {"train": _cmd_train, "eval": _cmd_eval, "list": _cmd_list, "plot": _cmd_plot, "join": _cmd_join,
                   "pbt": _cmd_pbt, "league": _cmd_league, "record": _cmd_record, "bench": _cmd_bench,
                   "export": _cmd_export, "serve": _cmd_serve}[args.command]
        return handler(args)
    except ConfigError as e:  # one line, whatever the input had in it (a value typed with a newline)
        print(f"distrl: error: {e}".replace("\n", "\\n"), file=sys.stderr)
        return 2
    except RunStopped as e:
        print(f"distrl: stopped: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("distrl: interrupted", file=sys.stderr)
        return 130


def console_main() -> None:
    """The ``distrl`` program: :func:`main`, then an exit without the interpreter's final scan of every object.

    Once torch's compiler stack is imported (``torch.optim`` imports ``torch._dynamo`` at its first optimizer) the
    interpreter tracks millions of objects, and its garbage collections at exit scan them all: 0.7-1.2 s after a
    short ``distrl train`` on a 2-core machine alone, 2-2.6 s with its cores busy, 0.2 s with the objects frozen
    (``gc.freeze()``: out of the collector's sight). Nothing in distrl relies on a reference cycle being collected
    at exit (run files, processes and Ray are closed explicitly, and Python does not promise finalizers at exit
    anyway); :func:`main` itself, called in-process, freezes nothing.

    The working directory goes on the import path, last, as ``python -m distrl`` puts it first: a user's env module
    beside them (``--env mycorridor:MyCorridor-v0``) imports, and no installed package is shadowed by a file there."""
    if os.getcwd() not in sys.path:
        sys.path.append(os.getcwd())
    code = main()
    from distrl.runtime.backends.process import stop_forkserver

    stop_forkserver()  # no process of the command outlives it
    gc.freeze()
    sys.exit(code)


if __name__ == "__main__":
    console_main()
