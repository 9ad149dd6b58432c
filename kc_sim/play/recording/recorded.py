"""Game records (docs/formats.md) of rounds played here:

* :class:`RecordedRound` - a :class:`~kc_sim.play.table.game.Game` that logs every turn, so the
  round can be written as a game record at any point, finished or not (``kc-sim play``,
  ``kc-sim replay``, the PettingZoo env).
* :func:`record_round`, :func:`record_row` - play one round between any mix of agents
  (through the Python loop) and return its record; ``kc-sim record`` and the tournament's
  ``--records`` use them.
* :func:`record_compiled_round` - one round of compiled policies through the compiled loop
  with its event log on.
"""

from __future__ import annotations

import operator

import numpy as np

from kc_sim.core import layout, loop
from kc_sim.core.loop import (
    C_DEALER,
    C_MATCH,
    C_MATCH_ROUND,
    C_PENALTY,
    C_SEED,
    MAX_DECISIONS,
    first_dealer,
    seed_policies,
)
from kc_sim.core.policy import MEM_SIZE
from kc_sim.errors import UserError
from kc_sim.game.actions import action_text, parse_action
from kc_sim.game.cards import card_text
from kc_sim.game.rules import RuleSet, parse_rules
from kc_sim.play.table.game import Game
from kc_sim.play.driver.python_loop import PythonLoop
from kc_sim.play.agents.registry import load_agents
from kc_sim.play.driver.faults import SeatFault
from kc_sim.records.format import make_record, turns_from_log

__all__ = ["RecordedRound", "record_round", "record_row", "record_compiled_round"]


class RecordedRound:
    """A :class:`~kc_sim.play.table.game.Game` that logs its turns as game-record turn dicts.

    :meth:`play` applies one action (legal, or :class:`~kc_sim.play.table.game.IllegalActionError`);
    ``turns`` is the log so far and :meth:`record` the game record of the round so far.
    Every attribute of the game (``seat``, ``over``, ``hand()``...) is reachable through
    ``.game``."""

    def __init__(self, game: Game, seed: int | None = None):
        self.game = game
        self.seed = game.seed if seed is None else int(seed)
        self.turns: list[dict] = []
        self._ids: list[int] = []          # action ids of the open turn
        self._open()

    def _open(self) -> None:
        g = self.game
        if not g.over:
            self.turns.append({"seat": g.seat, "drew": None, "actions": []})
            self._ids = []

    def play(self, action) -> None:
        """Apply an action id or its text; stop ends the turn (draws, passes the turn)."""
        a = parse_action(action) if isinstance(action, str) else operator.index(action)
        closed, drew = self.game.play(a)        # raises IllegalActionError, nothing logged
        self.log(a, closed, -1 if drew is None else drew)

    def log(self, a: int, closed: bool, drew: int) -> None:
        """Log action ``a`` already applied to ``game`` by another step (the environments'
        :func:`kc_sim.env.step.env_step`): whether it closed the turn and the card drawn in
        that turn (-1: none), what :meth:`kc_sim.play.table.game.Game.play` returns."""
        if a != layout.STOP:
            self.turns[-1]["actions"].append(action_text(a))
            self._ids.append(a)
        if closed:
            self.turns[-1]["drew"] = card_text(drew) if drew >= 0 else None
            self._open()

    @property
    def turn_actions(self) -> list[int]:
        """Action ids of the current turn so far."""
        return list(self._ids)

    def _repr_svg_(self) -> str:
        """The round's current position as SVG, every hand shown, the last action highlighted."""
        return self._repr_html_(svg_only=True)

    def _repr_html_(self, svg_only: bool = False) -> str:
        """In Jupyter: a replay viewer of the round so far (step back and forth through its
        decisions), or with ``svg_only`` the SVG of the current position."""
        # lazy: only Jupyter's display replays the record (through the reference's checks)
        from kc_sim.picture.replay_page import page_assets, replay_block
        from kc_sim.play import seeing

        names = [f"seat {s}" for s in range(self.game.players)]
        doc = seeing.replay_doc(self.record(names), title=f"seed {self.seed}")
        if svg_only:
            from kc_sim.picture.svg import position_svg

            return position_svg(doc["steps"][-1], names=names, dealer=self.game.dealer)
        return replay_block(doc, f"kc-round-{id(self):x}-{len(doc['steps'])}") + page_assets()

    def record(self, names, *, match: int = 0, round: int = 0) -> dict:
        """The game record of the round so far; ``result.end`` is ``unfinished`` (winner
        null, no penalties) while the round goes on."""
        g = self.game
        return make_record(
            rules=g.rules, names=names, seed=self.seed, initial=g.initial, turns=[dict(t) for t in self.turns],
            end=g.end if g.over else "unfinished", winner=g.winner, penalties=g.penalties or [],
            match=match, round=round,
        )


def record_round(agents, seed: int, rules: RuleSet | str, *, dealer: int | None = None, seat_map=None,
                 match: int = 0, round: int = 0, scores=None, fault_dir=None) -> dict:
    """Play one round from ``seed`` (any mix of agents) and return its game record
    (docs/formats.md). ``agents`` are by match seat; ``seat_map`` (default: all, in order) picks
    the round's seats; ``dealer`` is a round seat (default: drawn from the seed, as in
    ``play_rounds``). Python agents start fresh (new_match, then new_round). A misbehaving
    agent raises :class:`~kc_sim.play.driver.faults.AgentFault` after its record is saved to ``fault_dir``."""
    rules = parse_rules(rules)
    specs = load_agents(agents)
    seat_map = list(range(len(specs))) if seat_map is None else [int(s) for s in seat_map]
    k = len(seat_map)
    rules.check_players(k)
    seed = int(seed)
    dealer = int(first_dealer(seed, k)) if dealer is None else int(dealer)
    if not 0 <= dealer < k:
        raise UserError(f"bad dealer {dealer}: expected a seat from 0 to {k - 1}")
    python_loop = PythonLoop(specs, rules, fault_dir)
    scores = tuple(scores) if scores is not None else (0,) * k
    python_loop.new_match()
    try:
        python_loop.play(seed, k, dealer, seat_map, scores)
    except SeatFault as f:
        raise python_loop.fault(f, seed, k, dealer, seat_map, match=None, round=round) from f.__cause__
    return python_loop.record(seed, k, dealer, seat_map, match=match, round=round)


def record_row(agents, row, rules: RuleSet | str, *, fault_dir=None) -> dict:
    """The game record of a round row from ``play_rounds`` or ``play_matches``
    (``agents`` by match seat, as passed there): the round is replayed from the row's seed."""
    row = np.asarray(row)
    seat_map = [s for s in range(layout.MAX_SEATS) if row[C_PENALTY + s] >= 0]
    dealer = seat_map.index(int(row[C_DEALER]))
    match = int(row[C_MATCH])
    return record_round(agents, int(row[C_SEED]), rules, dealer=dealer, seat_map=seat_map,
                        match=max(match, 0), round=max(int(row[C_MATCH_ROUND]), 0), fault_dir=fault_dir)


def record_compiled_round(policies, names, seed: int, dealer: int, rules: RuleSet, *, seat_map=None,
                          match: int = 0, round: int = 0) -> tuple[dict, int, int]:
    """Deal from ``seed`` and play one round of compiled policies with the event log on.
    Returns (record, status, bad action); status is the core loop's (0 ok)."""
    players = len(names)
    g = Game(players, rules, seed, dealer)
    st = g.state
    mem = np.zeros((layout.MAX_SEATS, MEM_SIZE), dtype=np.int64)
    seed_policies(mem, seed, players)
    log = np.zeros(3 * MAX_DECISIONS, dtype=np.int64)
    seat_map = np.arange(layout.MAX_SEATS) if seat_map is None else np.asarray(seat_map, dtype=np.int64)
    status, bad, n = loop.play_round(st, tuple(policies), seat_map, mem, log)   # compiled on first use
    winner = int(st[layout.WINNER])
    rec = make_record(
        rules=rules, names=names, seed=seed, initial=g.initial, turns=turns_from_log(log[:n]),
        end=layout.END_NAMES[int(st[layout.END])] if st[layout.DONE] else "unfinished",
        winner=winner if winner >= 0 else None,
        penalties=st[layout.PENALTY:layout.PENALTY + players] if st[layout.DONE] else [],
        match=match, round=round,
    )
    return rec, int(status), int(bad)
