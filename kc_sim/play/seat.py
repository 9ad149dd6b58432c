"""The seat driver: any kc-sim agent (compiled policy or Python agent) played seat by seat
from Python on a ``Game``, exactly as the runner does (same seeds, same play)."""

from __future__ import annotations

import numpy as np

from kc_sim.core import layout as L
from kc_sim.core import loop
from kc_sim.core.policy import MEM_SIZE
from kc_sim.errors import UserError
from kc_sim.game.rules import parse_rules
from kc_sim.play.game import Game
from kc_sim.play.runner import as_action


class SeatAgent:
    """One player: any kc-sim agent, driven from Python on a :class:`~kc_sim.play.game.Game`.

    ``agent`` is an agent name (``greedy``, ``module:Name``, ``file.py:Name``) or an
    :class:`~kc_sim.play.agent.AgentSpec`. Call :meth:`new_match` once per match (optional: the
    first :meth:`new_round` calls it), :meth:`new_round` before each round with the round
    seat it plays, then :meth:`act` at each of its decisions. A compiled policy is called
    with the round state, its seat and its memory row, seeded with
    ``kc_sim.core.loop.seed_policies`` from the round seed; a Python agent (one instance
    per match) gets a :class:`~kc_sim.play.observation.SeatView`; both exactly as in the runner."""

    def __init__(self, agent):
        from kc_sim.play.registry import load_agent

        self.spec = load_agent(agent)
        self.name = self.spec.name
        self.mem = np.zeros((L.MAX_SEATS, MEM_SIZE), dtype=np.int64)
        self.instance = None
        self.seat = None
        self._matched = False

    @property
    def compiled(self) -> bool:
        return self.spec.compiled

    def new_match(self, seat: int, players: int, rules) -> None:
        """Start a match at match seat ``seat`` (a Python agent gets a fresh instance)."""
        if not self.compiled:
            self.instance = self.spec.factory()
            self.instance.new_match(int(seat), int(players), parse_rules(rules))
        self._matched = True

    def new_round(self, seat: int, players: int, rules, round_seed: int) -> None:
        """Prepare the round dealt from ``round_seed`` in which this player sits at round seat ``seat``."""
        seat, players, rules = int(seat), int(players), parse_rules(rules)
        if not self._matched:
            self.new_match(seat, players, rules)
        loop.seed_policies(self.mem, int(round_seed), players)
        self.seat = seat
        if self.instance is not None:
            self.instance.start_round(seat, players, rules, int(self.mem[seat, 0]))

    def act(self, game: Game, scores=()) -> int:
        """The agent's action id at its decision (its seat must be the seat to act).
        Raises UserError naming the agent if it returns something that is not an action."""
        s = self.seat
        if s is None:
            raise UserError(f"agent {self.name!r}: call new_round before act")
        if s != game.seat:
            raise UserError(f"agent {self.name!r} plays seat {s}, but seat {game.seat} is to act")
        if self.compiled:
            return int(self.spec.policy(game.state, s, self.mem[s]))
        from kc_sim.play.observation import SeatView

        value = self.instance.act(SeatView.from_game(game, scores))
        a = as_action(value)
        if a < 0:
            raise UserError(f"agent {self.name!r} (seat {s}) returned {value!r}, which is not an action "
                            "(expected an action id 0-448 or its text such as 7H>E, N>E, stop)")
        return a


