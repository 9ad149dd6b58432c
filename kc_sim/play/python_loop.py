"""The Python round loop: rounds between any mix of agents (Python agents, compiled
policies), played from Python through the seat driver (:class:`kc_sim.play.seat.SeatedAgents`).

It makes one compiled call per decision (:func:`advance`): that call checks and applies the
last action, logging it as the compiled loop does (so a faulty round's game record is at
hand), and, for a seat played by a Python agent, copies the visible part of the round into
a small buffer that :class:`kc_sim.play.observation.SeatView` decodes lazily. Compiled seats
are called from Python with their own memory row, exactly as the compiled loop calls them,
so both loops play the same rounds for the same seeds.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from kc_sim.core import layout, loop
from kc_sim.core.legal import is_legal
from kc_sim.core.step import deal
from kc_sim.game.actions import action_text
from kc_sim.game.rules import RuleSet
from kc_sim.play.faults import agent_fault, hook_fault
from kc_sim.play.game import Game
from kc_sim.play.observation import V_LEGAL, VIEW_SIZE, SeatView, fill_view
from kc_sim.play.seat import SeatedAgents, SeatFault
from kc_sim.records.format import make_record, turns_from_log

__all__ = ["PythonLoop", "advance", "NEXT", "OVER", "ILLEGAL"]

LOG_SIZE = 3 * loop.MAX_DECISIONS + 8

#: what :func:`advance` reports: a seat is to decide, the round is over, the action was illegal
NEXT, OVER, ILLEGAL = 0, 1, 2


@nb.njit(cache=True)
def begin(st, seed, players, dealer, rules, log):
    """Deal a round and open the event log (``log[0]`` holds its length)."""
    deal(st, seed, players, dealer, rules)
    log[0] = 2
    log[1] = loop.LOG_TURN + st[layout.SEAT]


@nb.njit(cache=True)
def advance(st, a, pymask, vis, log):
    """Apply action ``a`` of the seat to act (none when a < 0), logging it like the compiled
    loop does. Returns (status, seat, n_legal): ILLEGAL if ``a`` is illegal (nothing
    applied), OVER once the round is over, else NEXT with the seat to decide; for a seat in
    the bit mask ``pymask`` its visible state and its n_legal legal actions are copied into ``vis``."""
    n = log[0]
    if a >= 0:
        if not is_legal(st, a):
            return ILLEGAL, st[layout.SEAT], 0
        n = loop.play_action(st, a, log, n)
    log[0] = n
    if st[layout.DONE]:
        return OVER, -1, 0
    seat = st[layout.SEAT]
    k = 0
    if (pymask >> seat) & 1:
        k = fill_view(st, vis)
    return NEXT, seat, k


@nb.njit(cache=True)
def write_row(st, seed, seat_map, out, row, match, match_round):
    """The round row (``C_*`` columns) of the round just played, as the compiled loop writes it."""
    loop.write_round(st, seed, seat_map, loop.STATUS_OK, -1, out, row)
    out[row, loop.C_MATCH] = match
    out[row, loop.C_MATCH_ROUND] = match_round


class PythonLoop:
    """The Python round loop of one run: the agents by match seat (AgentSpecs, seated with
    :class:`~kc_sim.play.seat.SeatedAgents`), the round state, the view buffer and the event log."""

    def __init__(self, specs, rules: RuleSet, fault_dir=None):
        self.agents = SeatedAgents(specs, rules)
        self.rules = rules
        self.codes = rules.codes()
        self.fault_dir = fault_dir
        self.st = np.zeros(layout.STATE_SIZE, dtype=np.int64)
        self.vis = np.zeros(VIEW_SIZE, dtype=np.int64)
        self.log = np.zeros(LOG_SIZE, dtype=np.int64)

    def new_match(self) -> None:
        """Start a match (the agents' ``new_match`` hooks); a raising hook is an AgentFault."""
        try:
            self.agents.new_match()
        except SeatFault as f:
            raise hook_fault(f) from f.__cause__

    def play(self, seed: int, k: int, dealer: int, seat_map, scores: tuple) -> None:
        """Play one round (round seat s is match seat ``seat_map[s]``, ``scores`` the match
        totals by round seat). A fault raises SeatFault, the state and log left as they
        were at the fault."""
        st, vis, log, rules, agents = self.st, self.vis, self.log, self.rules, self.agents
        begin(st, seed, k, dealer, self.codes, log)
        agents.new_round(seed, seat_map)
        pymask = 0
        for s, act in enumerate(agents.round_acts):
            if act is not None:
                pymask |= 1 << s
        decide = agents.decide
        view = SeatView
        n_legal = 0

        def observe():
            return view(vis[:V_LEGAL + n_legal].tolist(), rules, scores)

        a = -1
        decisions = 0
        limit = loop.MAX_DECISIONS
        while True:
            status, s, n_legal = advance(st, a, pymask, vis, log)
            if status != NEXT:
                break
            a = decide(s, st, observe)
            decisions += 1
            if decisions > limit:
                raise SeatFault(agents.name(s), s, "too long", f"is in a round that passed {limit} decisions")
        if status == ILLEGAL:
            vis2 = np.zeros(VIEW_SIZE, dtype=np.int64)
            n = fill_view(st, vis2)
            legal = " ".join(action_text(x) for x in vis2[V_LEGAL:V_LEGAL + n])
            raise SeatFault(agents.name(s), s, "illegal", f"played the illegal action {action_text(a)} (legal: {legal})",
                            action_text(a))

    def record(self, seed: int, k: int, dealer: int, seat_map, *, match: int = 0, round: int = 0) -> dict:
        """The game record of the round just played (finished or stopped by a fault)."""
        st = self.st
        done = bool(st[layout.DONE])
        winner = int(st[layout.WINNER])
        return make_record(
            rules=self.rules, names=[self.agents.names[seat_map[s]] for s in range(k)], seed=seed,
            initial=Game(k, self.rules, seed, dealer).initial, turns=turns_from_log(self.log[1:self.log[0]]),
            end=layout.END_NAMES[int(st[layout.END])] if done else "unfinished",
            winner=winner if done and winner >= 0 else None,
            penalties=[int(x) for x in st[layout.PENALTY:layout.PENALTY + k]] if done else [],
            match=match, round=round,
        )

    def fault(self, f: SeatFault, seed: int, k: int, dealer: int, seat_map, *, match: int | None, round: int,
              match_seed: int | None = None):
        """Save the faulty round's record and build the one-line AgentFault."""
        rec = self.record(seed, k, dealer, seat_map, match=match or 0, round=round)
        return agent_fault(f, rec, self.fault_dir, seed=seed, turn=int(self.st[layout.TURNS]) - 1, match=match,
                           round=round, match_seed=match_seed)
