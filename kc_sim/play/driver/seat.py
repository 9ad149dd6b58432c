"""The seat driver: kc-sim agents (compiled policies or Python agents) played seat by seat
from Python. The runner's Python loop, ``kc-sim play``, the PettingZoo env's agent policies
and ``kc-sim record`` all go through :class:`SeatedAgents`, so an agent plays the same
everywhere for the same seeds.

What the driver does, once for every caller:

* **Making.** A Python agent gets one instance per match seat; a constructor that raises
  is one line naming the agent (:func:`made`).
* **Hooks.** ``new_match`` is called at the start of a match, ``start_round`` (which
  reseeds ``self.rng`` and calls ``new_round``) before every round.
* **Reseeding.** Before every round each seat's policy memory is zeroed and seeded from
  the round seed (``kc_sim.core.loop.seed_policies``), exactly as the compiled loop does; a
  Python agent's seed for the round is its row's seed word.
* **Calling.** A compiled policy is called with the round state, its round seat and its
  memory row; a Python agent with the :class:`~kc_sim.play.table.view.SeatView` of its seat.
* **Coercing.** What the agent returns becomes an action id (:func:`as_action`); anything
  else, or an exception, becomes a :class:`SeatFault` naming the agent and the seat.
"""

from __future__ import annotations

import operator
import struct

import numpy as np

from kc_sim.core import layout
from kc_sim.core.loop import seed_policies
from kc_sim.core.policy import MEM_SIZE
from kc_sim.errors import UserError
from kc_sim.game.actions import action_text, parse_action
from kc_sim.game.rules import RuleSet, parse_rules
from kc_sim.play.agents.interface import AgentSpec
from kc_sim.play.table.view import SeatView
from kc_sim.play.agents.registry import load_agent
from kc_sim.play.driver.faults import SeatFault
from kc_sim.play.driver.watchdog import AgentStalled
from kc_sim.support.lazy import OnFirstUse

__all__ = ["SeatedAgents", "as_action", "ACTION_HELP"]

ACTION_HELP = "an action id 0-448 or its text (7H>E, N>E, stop)"
_TEXT_IDS = {action_text(a): a for a in range(layout.N_ACTIONS)}


def as_action(value) -> int:
    """An action id from what an agent returned, or -1 when it is not an action."""
    if isinstance(value, bool):
        return -1
    if isinstance(value, str):
        a = _TEXT_IDS.get(value)
        if a is not None:
            return a
        try:
            return parse_action(value)
        except UserError:
            return -1
    try:
        a = operator.index(value)
    except TypeError:
        return -1
    return a if 0 <= a < layout.N_ACTIONS else -1


def short_repr(value, limit: int = 80) -> str:
    """``repr(value)`` on one line, cut to ``limit`` characters."""
    text = " ".join(repr(value).split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _raised(e: BaseException, where: str = "") -> str:
    """``raised KeyError in new_round: 'x'`` - what an agent's exception says, on one line."""
    return f"raised {type(e).__name__}{where}: {' '.join(str(e).split())}"


def _fault(agent: str, seat: int, e: BaseException, where: str = "", **kw) -> SeatFault:
    """The SeatFault of an agent at ``seat`` whose call raised ``e``: ``stalled`` when the
    watchdog stopped a decision that took too long (:mod:`kc_sim.play.driver.watchdog`), else ``raised``."""
    if isinstance(e, AgentStalled):
        return SeatFault(agent, seat, "stalled", e.what() + where, **kw)
    return SeatFault(agent, seat, "raised", _raised(e, where), **kw)


def made(spec: AgentSpec):
    """A new instance of a Python agent. A constructor that raises (or calls ``sys.exit``)
    is a :class:`~kc_sim.errors.UserError` naming the agent: one line wherever it runs."""
    try:
        return spec.factory()
    except (Exception, SystemExit) as e:
        raise UserError(f"agent {spec.name!r} could not be made: its constructor {_raised(e)}") from e


#: ``seed_policies`` as its compiled entry point, on first use: called directly it skips the
#: dispatcher's type resolution (the driver calls it once a round)
_SEEDER = OnFirstUse({"seed_policies": lambda: seed_policies.compile("void(int64[:, ::1], int64, int64)")})
_SEED_READERS: dict = {}      # players -> struct reader of mem[:players, 0] (rows MEM_SIZE int64 apart)


def _seed_reader(k: int):
    """Reads the seed words ``mem[:k, 0]`` of the memory array as a tuple, in one call."""
    r = _SEED_READERS.get(k)
    if r is None:
        r = _SEED_READERS[k] = struct.Struct(f"q{8 * (MEM_SIZE - 1)}x" * (k - 1) + "q").unpack_from
    return r


class SeatedAgents:
    """The agents of one run by match seat (an AgentSpec, an agent name, or None for a seat
    someone else plays, e.g. a person), with their policy memory.

    Call :meth:`new_match` before each match, :meth:`new_round` before each round (with the
    round seed and the map round seat -> match seat), then :meth:`act` (on a
    :class:`~kc_sim.play.table.game.Game`) or :meth:`decide` (on a bare state) at each decision of
    an agent's seat. Failures raise :class:`SeatFault`."""

    def __init__(self, agents, rules: RuleSet | str):
        self.specs: list[AgentSpec | None] = [None if a is None else load_agent(a) for a in agents]
        self.names = [None if a is None else a.name for a in self.specs]
        self.rules = parse_rules(rules)
        self.instances = [None if a is None or a.compiled else made(a) for a in self.specs]
        self.mem = np.zeros((layout.MAX_SEATS, MEM_SIZE), dtype=np.int64)
        self.mem_rows = [self.mem[s] for s in range(layout.MAX_SEATS)]
        self.seat_map: list[int] = []
        #: by round seat, for the current round: the Python agent's ``act`` (None for other seats)
        self.round_acts: list = []
        #: by round seat, for the current round: the compiled policy (None for other seats)
        self.round_policies: list = []

    def new_match(self) -> None:
        """Start a match: every Python agent's ``new_match`` hook, with its match seat."""
        players = len(self.specs)
        for m, inst in enumerate(self.instances):
            if inst is not None:
                try:
                    inst.new_match(m, players, self.rules)
                except Exception as e:      # an agent's hook raising is a fault too
                    raise _fault(self.names[m], m, e, " in new_match", hook="new_match") from e

    def new_round(self, round_seed: int, seat_map) -> None:
        """Prepare the round dealt from ``round_seed`` whose round seat s is match seat
        ``seat_map[s]``: seed every seat's memory, then each Python agent's ``start_round``."""
        seat_map = [int(m) for m in seat_map]
        k = len(seat_map)
        _SEEDER["seed_policies"](self.mem, int(round_seed), k)
        self.seat_map = seat_map
        self.round_acts = acts = [None] * k
        self.round_policies = policies = [None] * k
        specs, instances, rules = self.specs, self.instances, self.rules
        seeds = None
        for s, m in enumerate(seat_map):
            inst = instances[m]
            if inst is None:
                if specs[m] is not None:
                    policies[s] = specs[m].policy
                continue
            if seeds is None:
                seeds = _seed_reader(k)(self.mem, 0)
            try:
                inst.start_round(s, k, rules, seeds[s])
            except Exception as e:
                raise _fault(self.names[m], s, e, " in new_round") from e
            acts[s] = inst.act

    def name(self, s: int) -> str | None:
        """The name of the agent at round seat ``s`` (None for a seat no agent plays)."""
        return self.names[self.seat_map[s]]

    def plays(self, s: int) -> bool:
        """Does an agent play round seat ``s`` this round?"""
        return self.specs[self.seat_map[s]] is not None

    def decide(self, s: int, st, observe) -> int:
        """The action id the agent at round seat ``s`` chooses in state ``st``: a compiled
        policy is called with ``(st, s, memory row)``, a Python agent with ``observe()``
        (its SeatView). Raises SeatFault if it raises or returns something that is not an
        action (the id is not checked for legality here)."""
        act = self.round_acts[s]
        try:
            value = act(observe()) if act is not None else self.round_policies[s](st, s, self.mem_rows[s])
        except Exception as e:
            raise self.raised(s, e) from e
        return self.checked(s, value)

    def raised(self, s: int, e: Exception) -> SeatFault:
        """The SeatFault of the agent at round seat ``s`` raising ``e`` while deciding (or
        stopped by the watchdog: ``stalled``)."""
        return _fault(self.name(s), s, e)

    def checked(self, s: int, value) -> int:
        """``value`` returned by the agent at round seat ``s`` as an action id, else SeatFault."""
        if type(value) is int and 0 <= value < layout.N_ACTIONS:
            return value
        a = as_action(value)
        if a < 0:
            text = short_repr(value)
            raise SeatFault(self.name(s), s, "not an action",
                            f"returned {text}, which is not an action (expected {ACTION_HELP})", text)
        return a

    def act(self, game, scores=()) -> int:
        """The action id of the agent at the seat to act of ``game`` (a
        :class:`~kc_sim.play.table.game.Game` dealt from the round seed given to :meth:`new_round`);
        ``scores`` are the match totals by round seat."""
        s = game.seat
        if s >= len(self.seat_map):
            raise UserError(f"seat {s} is to act, but no round was started for it: call new_round first")
        if not self.plays(s):
            raise UserError(f"seat {s} is to act, but no agent plays it")
        return self.decide(s, game.state, lambda: SeatView.from_game(game, scores))
