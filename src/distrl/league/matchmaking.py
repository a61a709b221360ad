"""Who plays whom: the league coordinator's choice of each learning player's opponent, and when a player's weights
join the league as a frozen snapshot.

Modes (``mode``):

- ``naive``: naive self-play, every player against its own latest weights;
- ``uniform``: fictitious self-play, uniform over the frozen snapshots (the player itself until there is one);
- ``pfsp``: AlphaStar's league (Vinyals et al. 2019, Methods: league composition and prioritized fictitious
  self-play). A main agent plays PFSP (squared) over every snapshot half the time; 15% of the time it checks that no
  main exploiter's snapshot still beats it (min win rate below 0.3) and that it has not forgotten how to beat its own
  past (min below 0.7 over its snapshots, the part it only loses more to cut); else it plays self-play against a main
  agent, or, where it wins less than 0.3 of those games, PFSP (variance) over that agent's snapshots. A main
  exploiter plays the main agents while it wins more than 0.1 of its games against them, else PFSP (variance) over
  their snapshots; a league exploiter plays PFSP (linear capped) over every snapshot.

Fixed players (``add_fixed``: random play, a scripted player) are frozen members from the start, chosen as the
snapshots are wherever every frozen player is a candidate (``uniform``; PFSP over every snapshot), never as a
learning player's own past. ``fixed_share`` sets apart that share of every learning player's games, in any mode, for
a fixed player drawn uniformly (OpenAI Five kept a share of its games for other opponents than its latest self,
Berner et al. 2019): PFSP stops choosing a fixed player it beats, and naive self-play never does, so without it a
player stops learning how to punish that player's mistakes once it no longer loses to it.

Snapshots (``snapshot_rule``): ``schedule`` takes one every ``snapshot_steps`` of a player's env steps; ``win_rate``
takes one once ``snapshot_steps`` have passed and the player beats what it should (a main agent and a league
exploiter: every snapshot, a main exploiter: every main agent) more than 0.7 of the time, and at ``2 x
snapshot_steps`` whatever the rates. After its snapshot a main exploiter starts again from the initial weights, a
league exploiter with probability 0.25 (AlphaStar's resets).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from distrl.league.payoff import PayoffTable
from distrl.ops.league import monotonic_suffix_removed, pfsp_probabilities

MODES = ("naive", "uniform", "pfsp")
KINDS = ("main", "main_exploiter", "league_exploiter")
RULES = ("schedule", "win_rate")
SNAPSHOT_WIN_RATE = 0.7
LEAGUE_EXPLOITER_RESET = 0.25


@dataclass
class Entry:
    """A player as the matchmaker knows it (the learning player itself is ``league/players.py``'s ``Player``)."""

    id: str
    kind: str  # one of KINDS, "snapshot", or "fixed" (a scripted player: random play, a search, a user's function)
    parent: str | None = None  # a snapshot's learning player
    last_snapshot_steps: int = 0  # a learning player's env steps at its latest snapshot


class Matchmaker:
    def __init__(self, mode: str = "pfsp", snapshot_rule: str = "schedule", snapshot_steps: int = 100_000,
                 payoff: PayoffTable | None = None, seed: int = 0, fixed_share: float = 0.0):
        if mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}; got {mode!r}")
        if snapshot_rule not in RULES:
            raise ValueError(f"snapshot_rule must be one of {', '.join(RULES)}; got {snapshot_rule!r}")
        if snapshot_steps < 1:
            raise ValueError(f"snapshot_steps must be >= 1; got {snapshot_steps}")
        if not 0.0 <= fixed_share <= 1.0:
            raise ValueError(f"fixed_share must be in [0, 1]; got {fixed_share}")
        self.fixed_share = float(fixed_share)
        self.mode, self.rule, self.snapshot_steps = mode, snapshot_rule, snapshot_steps
        self.payoff = payoff if payoff is not None else PayoffTable()
        self.players: dict[str, Entry] = {}
        self.rng = np.random.default_rng(seed)

    # --- membership ------------------------------------------------------------------------------
    def add(self, player_id: str, kind: str) -> Entry:
        if kind not in KINDS:
            raise ValueError(f"a learning player's kind is one of {', '.join(KINDS)}; got {kind!r}")
        return self._join(Entry(player_id, kind))

    def add_fixed(self, player_id: str) -> Entry:
        """A scripted player that never learns: frozen from the start, chosen as the snapshots are (``uniform``,
        the PFSP weightings over every frozen player), never as a rival's past."""
        return self._join(Entry(player_id, "fixed"))

    def _join(self, player: Entry) -> Entry:
        self.payoff.add(player.id)
        self.players[player.id] = player
        return player

    def restore(self, player: Entry) -> Entry:
        """A player of a saved league, learning or frozen, back in (its row of the payoff table kept, if there)."""
        if player.id in self.players:
            raise ValueError(f"player {player.id!r} is already in the league")
        if player.id not in self.payoff.players:
            self.payoff.add(player.id)
        self.players[player.id] = player
        return player

    def snapshot(self, player_id: str, steps: int) -> tuple[str, bool]:
        """Freeze ``player_id``'s weights as a new snapshot; returns its id and whether the learning player now
        starts again from its initial weights."""
        player = self.players[player_id]
        frozen = self._join(Entry(self.next_snapshot_id(player_id), "snapshot", parent=player_id))
        player.last_snapshot_steps = steps
        reset = player.kind == "main_exploiter" or (
            player.kind == "league_exploiter" and self.rng.random() < LEAGUE_EXPLOITER_RESET)
        return frozen.id, bool(reset)

    def next_snapshot_id(self, player_id: str) -> str:
        """The id ``player_id``'s next snapshot will have: ``main@0``, ``main@1``, ..."""
        return f"{player_id}@{sum(p.parent == player_id for p in self.players.values())}"

    def _of_kind(self, kind: str) -> list[str]:
        return [p.id for p in self.players.values() if p.kind == kind]

    def _snapshots(self, parents=None) -> list[str]:
        """The frozen players: every snapshot and fixed player, or the snapshots of ``parents``."""
        if parents is None:
            return [p.id for p in self.players.values() if p.kind in ("snapshot", "fixed")]
        return [p.id for p in self.players.values() if p.kind == "snapshot" and p.parent in parents]

    def _pfsp(self, home: str, candidates: list[str], weighting: str) -> str:
        p = pfsp_probabilities(self.payoff.win_rates(home, candidates), weighting)
        return candidates[int(self.rng.choice(len(candidates), p=p))]

    # --- the choice ------------------------------------------------------------------------------
    def opponent(self, player_id: str) -> str:
        """The opponent for ``player_id``'s next episode: a learning player (its latest weights) or a snapshot."""
        kind = self.players[player_id].kind
        if self.fixed_share and self.rng.random() < self.fixed_share:
            fixed = self._of_kind("fixed")
            if fixed:
                return fixed[int(self.rng.integers(len(fixed)))]
        if self.mode == "naive":
            return player_id
        if self.mode == "uniform":
            past = self._snapshots()
            return past[int(self.rng.integers(len(past)))] if past else player_id
        if kind == "main":
            return self._main(player_id)
        if kind == "main_exploiter":
            return self._main_exploiter(player_id)
        past = self._snapshots()
        return self._pfsp(player_id, past, "linear_capped") if past else self._any_main()

    def _any_main(self) -> str:
        mains = self._of_kind("main")
        return mains[int(self.rng.integers(len(mains)))]

    def _main(self, me: str) -> str:
        toss = self.rng.random()
        past = self._snapshots()
        if toss < 0.5 and past:
            return self._pfsp(me, past, "squared")
        rival = self._any_main()
        if toss < 0.65:
            checked = self._verification(me, rival)
            if checked is not None:
                return checked
        if self.payoff.win_rate(me, rival) > 0.3:
            return rival
        its_past = self._snapshots({rival})
        return self._pfsp(me, its_past, "variance") if its_past else rival

    def _verification(self, me: str, rival: str) -> str | None:
        exploiters = self._snapshots(set(self._of_kind("main_exploiter")))
        if exploiters and self.payoff.win_rates(me, exploiters).min() < 0.3:
            return self._pfsp(me, exploiters, "squared")
        its_past = self._snapshots({rival})
        rates = self.payoff.win_rates(me, its_past)
        keep = monotonic_suffix_removed(rates)
        if keep and rates[:keep].min() < SNAPSHOT_WIN_RATE:
            return self._pfsp(me, its_past[:keep], "squared")
        return None

    def _main_exploiter(self, me: str) -> str:
        rival = self._any_main()
        if self.payoff.win_rate(me, rival) > 0.1:
            return rival
        its_past = self._snapshots({rival})
        return self._pfsp(me, its_past, "variance") if its_past else rival

    # --- snapshots -------------------------------------------------------------------------------
    def ready_to_snapshot(self, player_id: str, steps: int) -> bool:
        player = self.players[player_id]
        if steps < player.last_snapshot_steps:  # the player came back from a checkpoint older than its last snapshot
            player.last_snapshot_steps = steps  # (a killed league resumed): its schedule counts from where it is
        passed = steps - player.last_snapshot_steps
        if passed < self.snapshot_steps:
            return False
        if self.rule == "schedule" or passed >= 2 * self.snapshot_steps:
            return True
        # the learning players' snapshots, not the fixed players (a perfect one can only be drawn against)
        against = self._of_kind("main") if player.kind == "main_exploiter" else self._of_kind("snapshot")
        return not against or bool(self.payoff.win_rates(player_id, against).min() > SNAPSHOT_WIN_RATE)
