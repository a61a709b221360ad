"""``distrl league``: learning players of one system in a game of two or more players, their opponents chosen by a
coordinator (one per other seat, each drawn on its own).

    LEAGUE/league.json        the league's settings (what --resume reads back)
    LEAGUE/players/ID/        each learning player's own run dir (config.yaml, metrics.csv, checkpoints, ...)
    LEAGUE/pool/ID.safetensors  each frozen snapshot's weights, written once when it joins
    LEAGUE/league.csv         one row per player and slice: env steps, games, its wins, draws and losses against each
                              other seat of those games, its rating
    LEAGUE/joined.csv         one row per snapshot: when it joined, from whom, its rating, whether its player reset
    LEAGUE/state.json         the payoff table, players, ratings and the matchmaker's random state (after each slice)
    LEAGUE/payoff.png, ratings.png, summary.json   at the end

The players are trainers of the league's system, each training in slices of ``slice_steps`` env steps in turn in
this process (on its own runtime, ``local`` or ``inline``: its actors have the machine during its slice, as a PBT
member's do), or, on ``ray``, all at once, each a Ray actor (``players.py``). Their games are played in their own
envs: each other seat's policy is the one the coordinator chose for it that episode (``league/opponent.py``), pulled
from its pool. After each slice the league publishes the player's latest weights and asks the matchmaker whether
they join as a snapshot; a main exploiter that did starts again from its initial weights (AlphaStar's reset; a
league exploiter with probability 0.25).
"""

from __future__ import annotations

import math
import os
import secrets
import shutil
import time
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import quote

from safetensors.torch import load_file, save_file

from distrl.config import resume_conflicts
from distrl.core import shared
from distrl.errors import ConfigError
from distrl.league.coordinator import MAX_SEATS, Coordinator
from distrl.league.matchmaking import KINDS, MODES, RULES, Entry, Matchmaker
from distrl.league.opponent import Pool
from distrl.league.payoff import PayoffTable
from distrl.league.players import LocalPlayers, RayPlayers
from distrl.league.ratings import EloRatings
from distrl.runtime.backends import share
from distrl.runtime.run.run_dir import (
    append_row,
    last_wall,
    prepare_run_dir,
    read_json_object,
    read_rows,
    write_json,
)
from distrl.runtime.run.stop_signals import stop_signals

PLACEMENTS = ("local", "ray")
PLAYING_SYSTEMS = "a2c, ppo, impala, appo, seed, apex-dqn, r2d2, seed-r2d2, r2d3 (with its demonstrations)"
PLAYER_RUNTIMES = ("local", "inline")
DEFAULT_TOTAL_STEPS = 100_000
SET_BY_LEAGUE = ("env", "runtime", "run_dir", "seed", "total_steps")


def parse_players(text: str) -> list[tuple[str, str]]:
    """``main=1,main_exploiter=1`` -> [(player id, kind)]: ``main``, ``main_exploiter`` (``main_0``, ``main_1``
    where a kind has several)."""
    counts: dict[str, int] = {}
    for part in str(text).split(","):
        kind, eq, n = part.strip().partition("=")
        if kind not in KINDS or not eq or not n.isdigit() or kind in counts:
            raise ConfigError(f"--players is KIND=COUNT,... with each kind once, kinds {', '.join(KINDS)}; "
                              f"got {text!r}")
        counts[kind] = int(n)
    if counts.get("main", 0) < 1:
        raise ConfigError(f"--players needs at least one main agent (main=1); got {text!r}")
    if sum(counts.values()) > 16:
        raise ConfigError(f"--players: at most 16 learning players; got {sum(counts.values())}")
    return [(kind if n == 1 else f"{kind}_{i}", kind) for kind, n in counts.items() for i in range(n)]


def fixed_players(text) -> list[str]:
    """``random,minimax`` -> ["random", "minimax"] (empty: none)."""
    if not isinstance(text, str):
        raise ConfigError(f"--fixed is a comma-separated list of players; got {text!r}")
    return [name.strip() for name in text.split(",") if name.strip()]


def _check(saved: dict) -> None:
    """The league's own numbers and names (the command's, or a resumed league.json's), each in its range."""
    def count(x):
        return isinstance(x, int) and not isinstance(x, bool) and x >= 1

    if not count(saved["seed"] + 1) or not isinstance(saved["settings"], dict):
        raise ConfigError(f"--seed is a whole number >= 0 and the settings a mapping; got {saved['seed']!r}, "
                          f"{type(saved['settings']).__name__}")
    ids = {pid for pid, _ in parse_players(saved["players"])}
    names = fixed_players(saved["fixed"])
    if len(set(names)) != len(names) or ids & set(names) or any("@" in n for n in names):
        raise ConfigError(f"--fixed names each fixed player once, none a learning player's id or with '@'; got "
                          f"{saved['fixed']!r}")
    share = saved.get("fixed_share", 0.0)
    if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0.0 <= share <= 1.0 \
            or (share > 0 and not names):
        raise ConfigError(f"--fixed-share is the share of games against the fixed players, from 0 to 1, and above 0 "
                          f"only with --fixed; got {share!r}")
    if saved["mode"] not in MODES:
        raise ConfigError(f"--mode must be one of {', '.join(MODES)}; got {saved['mode']!r}")
    if saved["snapshot_rule"] not in RULES:
        raise ConfigError(f"--snapshot-rule must be one of {', '.join(RULES)}; got {saved['snapshot_rule']!r}")
    for key in ("snapshot_steps", "slice_steps", "total_steps"):
        if not count(saved[key]):
            raise ConfigError(f"--{key.replace('_', '-')} must be a whole number >= 1; got {saved[key]!r}")
    if saved["runtime"] not in PLACEMENTS:
        raise ConfigError(f"--runtime must be one of {', '.join(PLACEMENTS)} (the players in turn on this machine, or "
                          f"each a Ray actor); got {saved['runtime']!r}")
    if saved["player_runtime"] is not None and saved["player_runtime"] not in PLAYER_RUNTIMES:
        raise ConfigError(f"--player-runtime must be one of {', '.join(PLAYER_RUNTIMES)}; got "
                          f"{saved['player_runtime']!r}")
    if saved["runtime"] == "ray" and saved["player_runtime"] not in (None, "inline"):
        raise ConfigError(f"on --runtime ray every player is one Ray actor running its system inline; "
                          f"--player-runtime {saved['player_runtime']} is not possible there")


def check_game(env, who: str = "a league") -> None:
    """``env`` is a game of two or more players whose opponents the league (or population) chooses."""
    from distrl.envs.multi_agent import is_game, players, split_id

    if not isinstance(env, str) or not is_game(env) or set(split_id(env)[1]) - {"opening"}:
        raise ConfigError(f"{who} plays a game: --env pettingzoo:GAME or openspiel:GAME (e.g. "
                          f"pettingzoo:classic.tictactoe_v3, openspiel:kuhn_poker), its '?' part at most opening=N "
                          f"(the opponents are chosen for each game); got {env!r}")
    seats = players(env)  # a game that cannot be played (one agent, spaces one policy cannot fit) is one line here
    if seats - 1 > MAX_SEATS:
        raise ConfigError(f"{who} chooses at most {MAX_SEATS} opponents a game; {env} seats {seats} players")


def check_players(system: str, module, spec, sys_cfg, program, run_cfg, who: str = "a league") -> None:
    """Runs of ``system`` can be players whose policies the others' games play."""
    if program.make_learner is None or not module.LEGAL_ACTION_MASKS:
        raise ConfigError(f"{who}'s players need a learner whose policy honours legal-action masks, and {system} "
                          f"is not such a system; systems that are: {PLAYING_SYSTEMS}")
    if run_cfg.num_learners > 1:
        raise ConfigError(f"{who}'s player runs one learner; num_learners={run_cfg.num_learners} (valid: 1)")


def _plan(system: str, env: str, runtime: str, total_steps: int, settings: dict, fixed: list[str],
          fixed_share: float):
    """The players' run, checked as ``distrl train`` checks it: the system, the game, the settings."""
    from distrl.api import plan_run

    check_game(env)
    # as a player's own env id names it, with a league that is not asked (a plan only reads the game's spaces)
    module, run_cfg, sys_cfg, spec, program = plan_run(system, league_env(env, Path("league"), "main"), runtime=runtime,
                                                       total_steps=total_steps, **{**SLICED, **settings})
    if run_cfg.autoscale == "on":  # players train in slices, in turn: an idle player's windows would mislead it
        raise ConfigError("autoscale=on sizes one run; a league's players train in slices and cannot autoscale yet")
    from distrl.envs.opponents import opponent

    for name in fixed:  # each is one a game's env can build: one line now, not a crash in a player's env later
        opponent(name, env)
    check_players(system, module, spec, sys_cfg, program, run_cfg)
    if getattr(sys_cfg, "fixed_head_slack", None) is not None and not (fixed and fixed_share > 0):
        raise ConfigError("fixed_head_slack's second head learns from the share of games set apart for the league's "
                          "fixed players, and this league sets none apart: give --fixed (e.g. random) and a "
                          "--fixed-share above 0")
    return run_cfg


# a player trains in slices, in turn with the others: autoscale's default (auto) is off for it
SLICED = {"autoscale": "off"}
# a new league's settings where the command gives none; a resumed league keeps its own (league.json)
DEFAULTS = {"players": "main=1", "fixed": "", "fixed_share": 0.0, "mode": "pfsp", "snapshot_rule": "schedule",
            "snapshot_steps": 20_000, "slice_steps": 5_000, "runtime": "local", "seed": 0}


def run_league(system: str, env: str | None = None, *, players: str | None = None, fixed: str | None = None,
               fixed_share: float | None = None, mode: str | None = None, snapshot_rule: str | None = None,
               snapshot_steps: int | None = None, slice_steps: int | None = None,
               total_steps: int | None = None, runtime: str | None = None, player_runtime: str | None = None,
               seed: int | None = None, run_dir: str | None = None, resume: bool = False, force: bool = False,
               bind: str | None = None, settings: dict[str, Any] | None = None, log=None) -> dict[str, Any]:
    """Train a league; return (and write) its summary. Every input is checked before anything is written;
    ``resume`` continues the league in ``run_dir`` with the settings it was started with (a setting given that
    differs from them is refused in one line). A setting left None takes ``DEFAULTS``. ``total_steps`` is each
    learning player's budget of env steps (100,000 by default; given with ``resume``, the league's new budget).
    ``runtime`` places the players: ``local`` (in turn in this process) or ``ray`` (each a Ray actor, all at once);
    ``player_runtime`` is each player's own (by default its system's: ``local``, or ``inline`` for A2C and PPO;
    ``inline`` on ``ray``). ``fixed`` names scripted players the league holds from the start, comma-separated
    (``random``, ``minimax``, ``module:function``: ``envs/opponents.py``), and ``fixed_share`` the share of each
    learning player's games against one of them, whatever the mode (``matchmaking.py``). ``bind`` (HOST:PORT) is
    where the coordinator listens for games in other processes (by default loopback, or this node's address on Ray);
    inline players on this machine call it directly."""
    if resume:
        if not run_dir:
            raise ConfigError("--resume needs --run-dir naming the league to continue")
        if force:
            raise ConfigError("--resume and --force exclude each other: resume continues a league, force starts "
                              "it anew")
        league_dir = Path(run_dir)
        saved = read_json_object(league_dir / "league.json")
        missing = {"system", "env", "players", "mode", "snapshot_rule", "snapshot_steps", "slice_steps",
                   "total_steps", "runtime", "player_runtime", "seed", "settings", "fixed"} - set(saved)
        if missing:
            raise ConfigError(f"cannot resume: {league_dir / 'league.json'} lacks {', '.join(sorted(missing))}")
        try:
            _check(saved)
        except (ConfigError, TypeError, AttributeError) as e:
            raise ConfigError(f"cannot resume: {league_dir / 'league.json'}: {e}") from None
        given = {"system": system, "env": env, "players": players, "fixed": fixed, "fixed_share": fixed_share,
                 "mode": mode, "snapshot_rule": snapshot_rule, "snapshot_steps": snapshot_steps,
                 "slice_steps": slice_steps, "runtime": runtime, "player_runtime": player_runtime, "seed": seed}
        own = saved["settings"] if isinstance(saved["settings"], dict) else {}
        differs = resume_conflicts(given, {k: saved.get(k, DEFAULTS.get(k)) for k in given}, own, settings or {})
        if differs:
            raise ConfigError(f"cannot resume: the league in {league_dir} keeps the settings it was started with "
                              f"(only --total-steps may grow); this command gives {', '.join(differs)}")
        if total_steps is not None:  # a larger budget: the players resume with it
            budget = saved["total_steps"]
            saved = {**saved, "total_steps": total_steps}
            _check(saved)
            if total_steps < budget:
                raise ConfigError(f"cannot resume: --total-steps {total_steps:,} is below the league's {budget:,}; "
                                  "a resumed league's budget may grow, not shrink")
        _check_bind(bind, saved)
        league = _League(league_dir.resolve(), saved, resume=True, bind=bind, log=log)  # checks state.json, pool
        write_json(league_dir / "league.json", saved)
        return league.run()
    settings = dict(settings or {})
    for key in SET_BY_LEAGUE:
        if key in settings:
            raise ConfigError(f"--set {key}=... is set by the league itself (use --env, --runtime, --run-dir, --seed, "
                              "--total-steps)")
    given = {"players": players, "fixed": fixed, "fixed_share": fixed_share, "mode": mode,
             "snapshot_rule": snapshot_rule, "snapshot_steps": snapshot_steps, "slice_steps": slice_steps,
             "runtime": runtime, "seed": seed}
    saved = {"system": system, "env": env, **{k: DEFAULTS[k] if v is None else v for k, v in given.items()},
             "total_steps": DEFAULT_TOTAL_STEPS if total_steps is None else total_steps,
             "player_runtime": player_runtime, "settings": settings}
    runtime, fixed = saved["runtime"], saved["fixed"]
    _check(saved)
    if runtime == "ray":
        from distrl.api import require_ray

        require_ray()
        player_runtime = "inline"
    # None: the system's default
    saved["player_runtime"] = _plan(system, env, player_runtime, saved["total_steps"], settings,
                                    fixed_players(fixed), saved.get("fixed_share", 0.0)).runtime
    _check_bind(bind, saved)
    league_dir = Path(run_dir) if run_dir else \
        Path("runs") / f"league-{system}-{env.split(':', 1)[1]}-{time.strftime('%Y%m%d-%H%M%S')}"
    prepare_run_dir(league_dir, resume=False, force=force, marker="league.json")
    for folder in ("players", "pool"):
        (league_dir / folder).mkdir(exist_ok=True)
    write_json(league_dir / "league.json", saved)
    try:
        league = _League(league_dir.resolve(), saved, resume=False, bind=bind, log=log)
    except BaseException:  # the league could not be set up: the command leaves no league behind
        shutil.rmtree(league_dir, ignore_errors=True)
        raise
    return league.run()


def _check_bind(bind, saved: dict) -> None:
    if bind is None:
        return
    if _host_runtime(saved) == "inline":
        raise ConfigError(f"--bind {bind}: inline players' games call the coordinator in this process and nothing "
                          "listens; --bind is for players in other processes (--player-runtime local, --runtime ray)")
    host, _, port = str(bind).rpartition(":")
    if not host or not port.isdigit() or int(port) > 65535:
        raise ConfigError(f"the league's coordinator cannot listen on {bind!r} (give HOST:PORT, port 0 for any)")


class _League:
    def __init__(self, league_dir: Path, saved: dict, resume: bool, bind: str | None, log):
        self.dir, self.saved, self.resume, self.log = league_dir, saved, resume, log
        self.players = parse_players(saved["players"])
        if resume:
            _check_players_resume(league_dir, self.players)
        has_state = resume and (league_dir / "state.json").is_file()
        state = read_json_object(league_dir / "state.json") if has_state else None
        self.coordinator = self._coordinator(state)
        self.bind, self.host, self.pool = bind, None, None
        self.nodes: dict[str, str] = {}  # where each player's latest slice ran
        # a resumed league's rows go on from the clock of the session before, as a resumed run's metrics do
        self.started = time.perf_counter() - (last_wall(league_dir / "league.csv", league_dir / "joined.csv")
                                              if resume else 0.0)
        if not (league_dir / "league.csv").is_file():
            append_row(league_dir / "league.csv", ["wall_s", "player", "kind", "env_steps", "games", "wins", "draws",
                                                   "losses", "rating", "opponents", "node"])
        if not (league_dir / "joined.csv").is_file():
            append_row(league_dir / "joined.csv", ["wall_s", "snapshot", "player", "env_steps", "rating", "reset"])

    # --- the league's state ----------------------------------------------------------------------
    def _coordinator(self, state: dict | None) -> Coordinator:
        s = self.saved
        folders = [self.dir / "players" / pid for pid, _ in self.players]
        recipe = {"system": s["system"], "settings": played_settings(s["system"], s["settings"], folders),
                  "game": s["env"]}
        ratings = EloRatings(keep_history=False)
        if state is None:
            matchmaker = Matchmaker(s["mode"], s["snapshot_rule"], s["snapshot_steps"], seed=s["seed"],
                                    fixed_share=s.get("fixed_share", 0.0))
            coordinator = Coordinator(matchmaker, ratings, recipe)
            for pid, kind in self.players:
                coordinator.add_player(pid, kind)
            for name in fixed_players(s["fixed"]):
                coordinator.add_fixed(name)
            return coordinator
        try:
            payoff = PayoffTable.from_state(state["payoff"])
            matchmaker = Matchmaker(s["mode"], s["snapshot_rule"], s["snapshot_steps"], payoff, seed=s["seed"],
                                    fixed_share=s.get("fixed_share", 0.0))  # a league saved before it: none
            matchmaker.rng.bit_generator.state = state["rng"]
            coordinator = Coordinator(matchmaker, ratings, recipe)
            for p in state["players"]:
                player = matchmaker.restore(_player(p))
                ratings.ratings[player.id] = rating = float(state["ratings"][player.id])
                if not math.isfinite(rating) or int(p["env_steps"]) < 0 or int(p["last_snapshot_steps"]) < 0:
                    raise ValueError(f"player {player.id}: rating {rating}, env steps {p['env_steps']}")
                if player.kind in KINDS:
                    coordinator.steps[player.id] = int(p["env_steps"])
                elif player.kind == "snapshot":
                    coordinator.publish(player.id, load_file(self.dir / "pool" / f"{player.id}.safetensors"))
        except Exception as e:  # a file of the pool safetensors cannot read raises its own error type
            raise ConfigError(f"cannot resume: {self.dir / 'state.json'} or the pool is damaged "
                              f"({type(e).__name__}: {str(e)[:120]}); restore it or start the league anew") from None
        if [(p.id, p.kind) for p in matchmaker.players.values() if p.kind in KINDS] != self.players:
            raise ConfigError(f"cannot resume: state.json's learning players differ from league.json's {s['players']}")
        return coordinator

    def _save_state(self) -> None:
        c = self.coordinator
        with c.lock:
            payoff = c.matchmaker.payoff.state_dict()
            write_json(self.dir / "state.json", {
                "payoff": {"decay": payoff["decay"], "players": payoff["players"], "counts": payoff["counts"].tolist(),
                           "totals": payoff["totals"].tolist()},
                "players": [{"id": p.id, "kind": p.kind, "parent": p.parent, "last_snapshot_steps":
                             p.last_snapshot_steps, "env_steps": c.steps.get(p.id, 0)}
                            for p in c.matchmaker.players.values()],
                "ratings": dict(c.ratings.ratings),
                "rng": c.matchmaker.rng.bit_generator.state,
            })

    # --- the players -----------------------------------------------------------------------------
    def _makers(self) -> tuple[dict, dict, dict]:
        """Each player's trainer maker, its folder, and the maker of one made again after its Ray actor died. A
        resumed league's player resumes where it wrote a checkpoint and starts anew where it did not (it may have
        written its config.yaml and been killed before its first checkpoint: its turn had not come)."""
        s, makers, folders, again_makers = self.saved, {}, {}, {}
        again = None if self.resume else False
        for index, (pid, _) in enumerate(self.players):
            folder = self.dir / "players" / pid
            env = league_env(s["env"], self.dir, pid)  # the league's folder now (a league may move)
            shared_ = {str(self.dir): self.host.handle}  # the name the env's ?league= gives
            resumed = {"env": env, "run_dir": str(folder), "total_steps": s["total_steps"], "shared": shared_}
            fresh = {**SLICED, **s["settings"], "env": env, "run_dir": str(folder), "seed": s["seed"] + index,
                     "total_steps": s["total_steps"], "runtime": s["player_runtime"], "shared": shared_}
            makers[pid] = partial(make_player_trainer, s["system"], fresh, resumed, again)
            again_makers[pid] = partial(make_player_trainer, s["system"], fresh, resumed, None)
            folders[pid] = str(folder)
        return makers, folders, again_makers

    def _after_slice(self, pid: str, kind: str, report: dict) -> None:
        c, steps, model = self.coordinator, report["env_steps"], report["model"]
        with c.lock:
            c.steps[pid] = steps
        self.nodes[pid] = report["node"]
        c.publish(pid, model)
        wall = round(time.perf_counter() - self.started, 3)
        if c.snapshot_due(pid):
            frozen, reset = c.snapshot(pid, model, keep=lambda frozen: save_file(
                {k: v.contiguous() for k, v in model.items()}, self.dir / "pool" / f"{frozen}.safetensors"))
            if reset:  # the snapshot in state.json first: a kill before the reset's checkpoint loses neither
                self._save_state()
                c.publish(pid, self.pool.reset(pid))
            append_row(self.dir / "joined.csv", [wall, frozen, pid, steps, round(c.ratings.ratings[frozen], 2),
                                                 int(reset)])
            self._say(f"{frozen} joined the league ({steps:,} env steps of {pid}" + (", which starts again)" if reset
                                                                                    else ")"))
        games, tally, opponents = c.take(pid)
        append_row(self.dir / "league.csv", [wall, pid, kind, steps, games, *map(int, tally),
                                             round(c.ratings.ratings[pid], 2),
                                             " ".join(f"{k}:{v}" for k, v in sorted(opponents.items())),
                                             report["node"]])
        self._say(f"{pid}: {steps:,} env steps, {games} games ("
                  + ", ".join(f"{n} {o}" for n, o in zip(tally, ("won", "drawn", "lost"))) +
                  f"), rating {c.ratings.ratings[pid]:.0f}")
        self._save_state()

    def _last_rows(self, closed: dict) -> None:
        """The games each player played since its last slice's row (a league stopped mid-slice: Ctrl-C, SIGTERM),
        in a row of league.csv at the env steps of its closing checkpoint, so that the reports count them."""
        c, wall = self.coordinator, round(time.perf_counter() - self.started, 3)
        for pid, kind in self.players:
            summary = closed.get(pid)
            if summary:
                with c.lock:
                    c.steps[pid] = int(summary["env_steps"])
            games, tally, opponents = c.take(pid)
            if games:
                append_row(self.dir / "league.csv", [wall, pid, kind, c.steps.get(pid, 0), games, *map(int, tally),
                                                     round(c.ratings.ratings[pid], 2),
                                                     " ".join(f"{k}:{v}" for k, v in sorted(opponents.items())),
                                                     self.nodes.get(pid, "")])
                self._say(f"{pid}: {games} more games at the end (" + ", ".join(
                    f"{n} {o}" for n, o in zip(tally, ("won", "drawn", "lost"))) +
                    f"), rating {c.ratings.ratings[pid]:.0f}")  # the summary's rating is this one

    def _host(self) -> None:
        """The players' programs share the coordinator, hosted for where their games run (on Ray, once connected: at
        the node's address Ray uses), with a new secret each session that travels only inside the handles. A new
        league whose coordinator cannot listen where asked leaves nothing behind."""
        try:
            self.host = share(_host_runtime(self.saved), self.coordinator, secrets.token_urlsafe(24), self.bind)
        except ConfigError:
            if not self.resume:
                shutil.rmtree(self.dir, ignore_errors=True)
            raise

    def _say(self, line: str) -> None:
        if self.log is not None:
            self.log(line)

    def run(self) -> dict[str, Any]:
        with stop_signals():  # SIGTERM and SIGHUP end the league as Ctrl-C does: every player checkpointed
            return self._run()

    def _run(self) -> dict[str, Any]:
        interrupted, started_ray, kinds, closed = False, False, dict(self.players), {}
        try:
            if self.saved["runtime"] == "ray":
                from distrl.runtime.backends.ray import connect_ray

                address = self.saved["settings"].get("ray_address") or os.environ.get("RAY_ADDRESS")
                started_ray = connect_ray(address, len(self.players))
            self._host()
            makers, folders, again_makers = self._makers()
            if self.saved["runtime"] == "ray":
                self.pool = RayPlayers(makers, folders, self.coordinator.publish, again_makers)
            else:
                self.pool = LocalPlayers(makers, folders, self.coordinator.publish)
            for pid in makers:
                self.pool.submit(pid, self.saved["slice_steps"])
            while self.pool.pending():
                pid, report = self.pool.wait_any()
                self._after_slice(pid, kinds[pid], report)
                if not report["done"]:
                    self.pool.submit(pid, self.saved["slice_steps"])
        except KeyboardInterrupt:
            interrupted = True
        finally:
            if self.pool is not None:
                closed = dict(zip(self.pool.workers, self.pool.close()))  # every player's checkpoint and summary
            shared.forget(str(self.dir))  # this process's own games' (inline players)
            Pool.drop(str(self.dir))
            if self.host is not None:
                self.host.close()
            if started_ray:
                import ray

                ray.shutdown()
        self._last_rows(closed)
        self._save_state()
        from distrl.league.reports import write_reports

        write_reports(self.dir, self.coordinator)
        summary = self._summary(interrupted)
        write_json(self.dir / "summary.json", summary)
        return summary

    def _summary(self, interrupted: bool) -> dict[str, Any]:
        c = self.coordinator
        rows = read_rows(self.dir / "league.csv")
        games = {pid: [sum(int(r[k]) for r in rows if r["player"] == pid) for k in ("wins", "draws", "losses")]
                 for pid, _ in self.players}
        return {
            "system": self.saved["system"], "env": self.saved["env"], "mode": self.saved["mode"],
            "players": [{"id": pid, "kind": kind, "env_steps": c.steps.get(pid, 0),
                         "rating": _rounded(c.ratings.ratings[pid]), "run_dir": str(self.dir / "players" / pid),
                         **dict(zip(("wins", "draws", "losses"), games[pid]))} for pid, kind in self.players],
            "snapshots": [p.id for p in c.matchmaker.players.values() if p.kind == "snapshot"],
            "games": sum(int(r["games"]) for r in rows),
            "main_run_dir": str(self.dir / "players" / self.players[0][0]),
            "interrupted": interrupted,
            "run_dir": str(self.dir),
        }


def _host_runtime(saved: dict) -> str:
    """Where the players' games run, for which the coordinator is hosted."""
    return "ray" if saved["runtime"] == "ray" else saved["player_runtime"]


def _check_players_resume(league_dir: Path, players: list) -> None:
    """A resumed league's players each resume from a loadable checkpoint or start anew with none written; one whose
    checkpoints are all damaged is one line before any player is made (the league's files as they were)."""
    from distrl.runtime.run.checkpoint import latest_checkpoint, list_checkpoints

    for pid, _ in players:
        root = league_dir / "players" / pid / "checkpoints"
        if list_checkpoints(root) and latest_checkpoint(root) is None:
            raise ConfigError(f"cannot resume: player {pid} has no loadable checkpoint in {root}; restore one, or "
                              "delete the folder to start that player anew")


def played_settings(system: str, settings: dict, run_dirs: list[Path]) -> dict:
    """The settings the pool builds the players' policies with, in the games' processes: those the first player's run
    was made with (its config.yaml, as a resume reads it: a setting the file predates at the value it ran with), else
    ``settings`` (a new league: the players are made with them and today's defaults). A default changed since a league
    started (appo's ``obs_norm``) would otherwise build policies its pool's weights do not fit."""
    import dataclasses

    from distrl.agents.registry import saved_run
    from distrl.api import resolve_configs
    from distrl.runtime.run.run_dir import read_config

    for run_dir in run_dirs:
        if (run_dir / "config.yaml").is_file():
            _, _, sys_cfg = resolve_configs(system, {}, saved_run(read_config(run_dir)))
            return dataclasses.asdict(sys_cfg)
    return settings


def league_env(game: str, league_dir: Path, player: str) -> str:
    """A player's env id: the game (with its ``?opening=`` if any), its games' opponents from the league in
    ``league_dir`` (quoted: a folder may hold ``&`` or ``?``)."""
    return f"{game}{'&' if '?' in game else '?'}league={quote(str(league_dir), safe='/')}&player={quote(player)}"


def make_player_trainer(system: str, fresh: dict, resumed: dict, resume: bool | None):
    """A player's trainer, not started (module-level, so that Ray can send it to the player's actor): a new run with
    ``fresh`` settings, or its run resumed with ``resumed`` ones; ``resume=None`` (a resumed league's player, or one
    made again after its actor died) resumes if it wrote a checkpoint and starts anew if it wrote none; checkpoints
    that are there but none loadable are the resume's one-line error, not a start that would delete them."""
    from distrl.api import make_trainer
    from distrl.runtime.run.checkpoint import list_checkpoints

    if resume is None:
        resume = bool(list_checkpoints(Path(resumed["run_dir"]) / "checkpoints"))
    if resume:
        return make_trainer(system, resume=True, **resumed)
    return make_trainer(system, force=True, **fresh)


def _player(p: dict) -> Entry:
    kind = str(p["kind"])
    if kind not in (*KINDS, "snapshot", "fixed"):
        raise ValueError(f"player kind {kind!r}")
    return Entry(str(p["id"]), kind, None if p["parent"] is None else str(p["parent"]), int(p["last_snapshot_steps"]))


def _rounded(x: float) -> float | None:
    return round(float(x), 2) if math.isfinite(x) else None
