"""Luck: how much a card a seat was dealt or drew moved its chance of winning.

The seat's *value* of a position is its win probability, from what it knew there, when the
evaluator plays every seat from there on: the mean over worlds dealt from the cards it had
not seen (:mod:`kc_sim.judge.rollouts`).

* **Luck of a draw**: the value right after the draw minus the value of the same position
  with the drawn card put back among the unseen cards and drawn again at random: the mean
  over every card it could have been (each unseen card as likely as the seat could tell).
  Positive: the card was better than the average card.
* **Luck of the deal**: the value of the position after the deal (the seat's hand and the
  layout known; under ``draw=start`` the first player's opening draw included) minus the
  seat's *expectation at deal*: its value over fresh deals of the round with the same
  players, dealer and rules (its chance from its place at the table alone).

Both are paired over worlds with a 95% Student interval; a value is estimated on a fixed
number of worlds. For a draw, world ``j`` of the two values is the same deal but for one swap
(the drawn card and the one it could have been), so their difference is nearly free of the
noise of the deal; for the deal, world ``j`` of the two shares only its random numbers.
"""

from __future__ import annotations

from dataclasses import dataclass

from kc_sim.errors import UserError
from kc_sim.game.cards import card_text
from kc_sim.judge.decisions import paired
from kc_sim.judge.rollouts import PRIOR, REDRAW, VIEW, view_batch

__all__ = ["Luck", "deal_luck", "draw_luck", "value"]


@dataclass
class Luck:
    """One piece of luck, in points of win probability: ``after - before`` with its interval."""

    seat: int
    turn: int | None           # None: the deal
    card: int | None
    before: float
    after: float
    luck: float
    lo: float
    hi: float
    worlds: int
    step: int = 0              # the replay step right after the card came (0: the deal)

    def as_dict(self) -> dict:
        return {"seat": self.seat, "turn": None if self.turn is None else self.turn + 1, "card": None if self.card is None else card_text(self.card),
                "before": round(self.before, 3), "after": round(self.after, 3), "luck": round(self.luck, 3),
                "luck_ci": [round(self.lo, 3), round(self.hi, 3)], "worlds": self.worlds,
                "step": self.step}


def value(st, seat, mode, policy, seed, worlds, card=-1):
    """``(win per world, penalty difference per world)`` of a position to ``seat``."""
    win, pen, bad = view_batch(st, seat, mode, policy, seed, 0, worlds, card)
    if bad:
        raise UserError(f"the evaluator played an illegal action in {bad} rollout(s): choose a legal compiled agent "
                        "with --evaluator")
    return win, pen


def _luck(seat, turn, card, before, after, worlds, step=0) -> Luck:
    m, lo, hi = paired((after - before) * 100.0)
    return Luck(seat, turn, card, float(before.mean()) * 100.0, float(after.mean()) * 100.0, m, lo, hi, worlds, step)


def draw_luck(draw, policy, *, seed: int, worlds: int) -> Luck:
    """The luck of one :class:`~kc_sim.judge.positions.Draw` to the seat that drew."""
    after, _ = value(draw.state, draw.seat, VIEW, policy, seed, worlds)
    before, _ = value(draw.state, draw.seat, REDRAW, policy, seed, worlds, draw.card)
    return _luck(draw.seat, draw.turn, draw.card, before, after, worlds, draw.step)


def deal_luck(start, seat, policy, *, seed: int, worlds: int) -> Luck:
    """The luck of the deal to ``seat``: ``before`` is its expectation at deal."""
    after, _ = value(start, seat, VIEW, policy, seed, worlds)
    before, _ = value(start, seat, PRIOR, policy, seed, worlds)
    return _luck(seat, None, None, before, after, worlds)
