"""A match driven from Python, round by round: the runner's Python loop and ``kc-sim play
--match`` both play their matches through :class:`Match`, which deals, seats and scores them
with the very functions the compiled ``kc_sim.core.loop.play_matches`` uses.

The match rule and how a match is dealt (docs/rules.md, Matches) are ``kc_sim.core.match``:
rounds are played until the match switch says stop, each adding every player's penalty to
their total; each round is dealt from its own seed of the match seed, the first dealer drawn
from the match seed and the deal passing left after every round, skipping players out of the
match (under eliminate_25 only the players still in are seated, in match-seat order).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kc_sim.core import match as rule
from kc_sim.core.layout import MAX_SEATS
from kc_sim.core.step import first_dealer
from kc_sim.game.rules import RuleSet

__all__ = ["Match", "MatchRound"]


@dataclass(frozen=True)
class MatchRound:
    """One round of a match, before it is played."""

    index: int               # round of the match, from 0
    seed: int                # its deal seed
    seat_map: list[int]      # round seat -> match seat (the players still in)
    dealer: int              # the dealer's round seat
    scores: tuple            # match totals by round seat before the round


class Match:
    """One match between ``players`` match seats from ``match_seed`` under ``rules.match``.

    ``for rnd in match.rounds(): ...; match.add_round(penalties)``: each :class:`MatchRound`
    says how to deal and seat the round; :meth:`add_round` takes its penalties by round
    seat. Afterwards ``totals``, ``rounds_played``, :attr:`winners` (a bit mask of match
    seats) and :meth:`row` (the ``M_*`` match row) hold the result."""

    def __init__(self, match_seed: int, players: int, rules: RuleSet):
        self.seed, self.players, self.rules = int(match_seed), int(players), rules
        self.kind = int(rules.match_code)
        self.totals = np.zeros(players, dtype=np.int64)
        self.active = np.ones(players, dtype=np.bool_)
        self.last_active = self.active.copy()
        self.dealer = int(first_dealer(self.seed, players))     # a match seat
        self.rounds_played = 0
        self.over = False
        self._open: MatchRound | None = None
        self._seat_map = np.zeros(MAX_SEATS, dtype=np.int64)    # round seat -> match seat, this round

    def rounds(self):
        """The rounds of the match, one at a time; call :meth:`add_round` after each."""
        while not self.over:
            k, dealer = rule.seat_round(self.active, self.players, self.dealer, self._seat_map)
            seat_map = [int(m) for m in self._seat_map[:k]]
            r = self.rounds_played
            self._open = MatchRound(r, int(rule.round_seed(self.seed, r)), seat_map, int(dealer),
                                    tuple(int(self.totals[m]) for m in seat_map))
            yield self._open
            if self._open is not None:
                raise RuntimeError("Match.rounds: add_round was not called for the round just played")

    def add_round(self, penalties) -> None:
        """Add the penalties (by round seat) of the round just played; decides whether the
        match is over and, if not, passes the deal left past the players out of the match."""
        rnd, self._open = self._open, None
        k = len(rnd.seat_map)
        self.rounds_played += 1
        self.over = bool(rule.add_round(self.kind, self.rules.match_rounds, self.rounds_played, self.totals,
                                        self.active, self.last_active, self._seat_map,
                                        np.asarray(penalties, dtype=np.int64), k, self.players))
        if not self.over:
            self.dealer = int(rule.pass_deal(self.dealer, self.active, self.players))

    @property
    def eliminated(self) -> list[int]:
        """Match seats that left the match in the round just added (eliminate_25)."""
        return [m for m in range(self.players) if self.last_active[m] and not self.active[m]]

    @property
    def winners(self) -> int:
        """Bit mask of the match seats sharing the win (once the match is over)."""
        return int(rule.match_winners(self.kind, self.totals, self.active, self.last_active, self.players))

    def row(self, out) -> None:
        """Write the match row (``kc_sim.core.rows``' ``M_*`` columns) into ``out``."""
        rule.write_match(out, self.seed, self.rounds_played, self.winners, self.totals, self.players)
