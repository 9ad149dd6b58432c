"""The Python round loop: rounds between any mix of agents (Python agents, compiled
policies), played from Python through the seat driver (:class:`kc_sim.play.driver.seat.SeatedAgents`).

It makes one compiled call per decision (:func:`step`): that call checks and applies the
last action, logging it as the compiled loop does (so a faulty round's game record is at
hand), and, for a seat played by a Python agent, copies the visible part of the round into
that agent's view buffer, which :class:`kc_sim.play.table.view.SeatView` decodes lazily.
Compiled seats are called from Python with their own memory row, exactly as the compiled
loop calls them, so both loops play the same rounds for the same seeds.

Per decision the loop does as little Python work as it can, since that, not the game,
is what a Python agent's rounds cost:

* :func:`begin` and :func:`step` take integers only, the address of the loop's memory
  block (state, log, the view buffers' addresses) and the action, and are called through
  their compiled entry points (:func:`entry_points`): an array argument costs a type
  check and an unboxing per call, the dispatcher's type resolution as much again
  (:func:`kc_sim.core.views.array_at`). They return one integer: the seat to decide and
  its number of legal actions, or OVER / ILLEGAL / NOT_ACTION.
* A view is built over its agent's own buffer (one per match seat, an ``array.array``,
  so reading it gives Python ints and no other seat's data is ever in it), with
  ``legal`` read by one ``struct`` call. The buffer is refilled at that agent's next
  decision, so a view the agent keeps past ``act`` (seen from its reference count) is
  first given its own copy (:func:`kc_sim.play.table.view.freeze`): the view stays
  valid, as promised.
* Faults are found where they were: an exception from ``act``, a value that is no
  action (non-ints through ``SeatedAgents.checked``; ints out of range by :func:`step`),
  an illegal action, and one decision past ``MAX_DECISIONS``.
"""

from __future__ import annotations

import sys
from threading import get_ident

import numba as nb
import numpy as np

from kc_sim.core import layout, loop
from kc_sim.core.legal import is_legal
from kc_sim.core.step import deal
from kc_sim.core.views import array_at
from kc_sim.game.actions import action_text
from kc_sim.game.rules import RuleSet
from kc_sim.game.variants import N_RULE_CODES
from kc_sim.play.driver.faults import agent_fault, hook_fault
from kc_sim.play.table.game import Game
from kc_sim.play.table.view import (
    V_LEGAL,
    VIEW_SIZE,
    SeatView,
    fill_view,
    freeze,
    unpackers,
    view_buffer,
)
from kc_sim.play.driver.faults import SeatFault
from kc_sim.play.driver.seat import SeatedAgents
from kc_sim.play.driver.watchdog import rounds_in_play
from kc_sim.records.format import make_record, turns_from_log
from kc_sim.support.lazy import OnFirstUse

__all__ = ["PythonLoop", "begin", "step", "OVER", "ILLEGAL", "NOT_ACTION"]

LOG_SIZE = 3 * loop.MAX_DECISIONS + 8

# --- the loop's memory block (int64): state | log | view-buffer addresses by round seat |
# mask of the Python seats | rule codes
B_LOG = layout.STATE_SIZE
B_TABLE = B_LOG + LOG_SIZE
B_PYMASK = B_TABLE + layout.MAX_SEATS
B_CODES = B_PYMASK + 1
BLOCK_SIZE = B_CODES + N_RULE_CODES

#: what :func:`step` returns instead of a seat: the round is over, the action was illegal,
#: the agent's integer is no action id
OVER, ILLEGAL, NOT_ACTION = -1, -2, -3
_LEGAL_OFFSET = 8 * V_LEGAL   # where the legal ids start in a view buffer, in bytes
@nb.njit(cache=True, inline="always")
def _next(st, addr):
    """OVER once the round is over, else the seat to decide; for a seat in the block's
    Python-seat mask its view is written into its buffer and its number of legal actions
    added as ``n << 3``."""
    if st[layout.DONE]:
        return OVER
    seat = st[layout.SEAT]
    seats = array_at(addr + 8 * B_TABLE, layout.MAX_SEATS + 1)
    if (seats[layout.MAX_SEATS] >> seat) & 1 == 0:
        return seat
    return seat | (fill_view(st, array_at(seats[seat], VIEW_SIZE)) << 3)


@nb.njit(cache=True)
def begin(addr, seed, players, dealer):
    """Deal a round into the block at ``addr`` and open its event log (``log[0]`` holds its
    length). Returns what :func:`step` does: the first seat to decide, and its view."""
    st = array_at(addr, layout.STATE_SIZE)
    log = array_at(addr + 8 * B_LOG, LOG_SIZE)
    deal(st, seed, players, dealer, array_at(addr + 8 * B_CODES, N_RULE_CODES))
    log[0] = 2
    log[1] = loop.LOG_TURN + st[layout.SEAT]
    return _next(st, addr)


@nb.njit(cache=True)
def step(addr, a):
    """Apply action ``a`` of the seat to act in the block at ``addr``, logging it like the
    compiled loop does. Returns NOT_ACTION if ``a`` is no action id and ILLEGAL if it is
    illegal (nothing applied either way), OVER once the round is over, else the seat to
    decide (plus, for a Python seat, its number of legal actions as ``n << 3``, its view
    written into its buffer)."""
    if a < 0 or a >= layout.N_ACTIONS:
        return NOT_ACTION
    st = array_at(addr, layout.STATE_SIZE)
    if not is_legal(st, a):
        return ILLEGAL
    log = array_at(addr + 8 * B_LOG, LOG_SIZE)
    log[0] = loop.play_action(st, a, log, log[0])
    return _next(st, addr)


#: ``begin`` and ``step`` as their compiled entry points, compiled (or loaded from the cache) on first use
_ENTRY = OnFirstUse({"begin": lambda: begin.compile("int64(int64, int64, int64, int64)"),
                     "step": lambda: step.compile("int64(int64, int64)")})


def entry_points() -> tuple:
    """``(begin, step)`` as their compiled entry points, compiled (or loaded from the cache)
    on first use. Called directly they skip the dispatcher's type resolution, half the
    cost of a call that takes integers only."""
    return _ENTRY["begin"], _ENTRY["step"]


@nb.njit(cache=True)
def write_row(st, seed, seat_map, out, row, match, match_round):
    """The round row (``C_*`` columns) of the round just played, as the compiled loop writes it."""
    loop.write_round(st, seed, seat_map, loop.STATUS_OK, -1, out, row)
    out[row, loop.C_MATCH] = match
    out[row, loop.C_MATCH_ROUND] = match_round


class PythonLoop:
    """The Python round loop of one run: the agents by match seat (AgentSpecs, seated with
    :class:`~kc_sim.play.driver.seat.SeatedAgents`), the round state and event log (``st`` and
    ``log``, views of one memory block) and one view buffer per match seat."""

    def __init__(self, specs, rules: RuleSet, fault_dir=None):
        self.agents = SeatedAgents(specs, rules)
        self.rules = rules
        self.fault_dir = fault_dir
        self.block = np.zeros(BLOCK_SIZE, dtype=np.int64)
        self.block[B_CODES:B_CODES + N_RULE_CODES] = rules.codes()
        self.addr = self.block.ctypes.data
        self.st = self.block[:layout.STATE_SIZE]
        self.log = self.block[B_LOG:B_LOG + LOG_SIZE]
        self.view_bufs = [view_buffer() for _ in self.agents.specs]
        # numpy views of the buffers: their addresses, and their exports keep the buffers from
        # being resized (an agent's obs._v.append raises BufferError) under the compiled code
        self._view_arrays = [np.frombuffer(b, dtype=np.int64) for b in self.view_bufs]
        self.view_addrs = [v.ctypes.data for v in self._view_arrays]
        self._begin, self._step = entry_points()
        self._seated: list | None = None     # the seat map the block's view table is set for
        self._bufs: list = []                # view buffers by round seat (None: not a Python seat)
        self._in_play = rounds_in_play().by_thread   # where a round is registered while it plays (the watchdog reads it)

    def _seat(self, seat_map: list) -> None:
        """Point the block's view table at the view buffers of the Python agents' match
        seats, by round seat, and set its mask of Python seats."""
        block, pymask, insts = self.block, 0, self.agents.instances
        self._bufs = [None] * len(seat_map)
        for s, m in enumerate(seat_map):
            if insts[m] is not None:
                pymask |= 1 << s
                self._bufs[s] = self.view_bufs[m]
                block[B_TABLE + s] = self.view_addrs[m]
        block[B_PYMASK] = pymask
        self._seated = seat_map

    def new_match(self) -> None:
        """Start a match (the agents' ``new_match`` hooks); a raising hook is an AgentFault."""
        try:
            self.agents.new_match()
        except SeatFault as f:
            raise hook_fault(f) from f.__cause__

    def play(self, seed: int, k: int, dealer: int, seat_map, scores: tuple) -> None:
        """Play one round (round seat s is match seat ``seat_map[s]``, ``scores`` the match
        totals by round seat). A fault raises SeatFault, the state and log left as they
        were at the fault. The round is registered while it plays
        (:class:`~kc_sim.play.driver.watchdog.RoundsInPlay`), so a watchdog can see its decisions."""
        in_play, thread = self._in_play, get_ident()
        outer = in_play.get(thread)                  # (a round played inside another's decision)
        in_play[thread] = (self, seed)
        try:
            self._round(seed, k, dealer, seat_map, scores)
        finally:
            if outer is None:
                del in_play[thread]
            else:
                in_play[thread] = outer

    def _round(self, seed: int, k: int, dealer: int, seat_map, scores: tuple) -> None:
        addr, rules, agents, step_at, st = self.addr, self.rules, self.agents, self._step, self.st
        seated = list(seat_map)
        if seated != self._seated:
            self._seat(seated)
        r = self._begin(addr, seed, k, dealer)
        agents.new_round(seed, seat_map)
        acts = agents.round_acts
        bufs = self._bufs
        unpack, view, refs = unpackers(), SeatView, sys.getrefcount
        a = s = -1
        for _ in range(loop.MAX_DECISIONS):
            if r < 0:
                break
            s = r & 7
            act = acts[s]
            if act is None:                                  # a compiled policy
                a = agents.decide(s, st, None)
            else:
                v = bufs[s]
                obs = view(v, rules, scores, unpack[r >> 3](v, _LEGAL_OFFSET))
                try:
                    a = act(obs)
                except Exception as e:
                    freeze(obs)
                    raise agents.raised(s, e) from e
                if refs(obs) > 2:                            # kept by the agent: give it its own copy
                    freeze(obs)
                if type(a) is not int:
                    a = agents.checked(s, a)
            try:
                r = step_at(addr, a)
            except OverflowError:                            # an int beyond int64: no action
                agents.checked(s, a)
                raise
        else:
            if r >= 0:
                # one decision too many: the agent still decides (its faults come first), then the round stops
                s = r & 7
                agents.decide(s, st, lambda: SeatView.from_state(st, rules, scores))
                limit = loop.MAX_DECISIONS
                raise SeatFault(agents.name(s), s, "too long", f"is in a round that passed {limit} decisions")
        if r == NOT_ACTION:
            agents.checked(s, a)                             # raises: the int is out of range
        if r == ILLEGAL:
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
