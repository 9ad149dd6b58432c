"""The reference reading of the draw control variates (``kc_sim.core.draw_luck``): a round
replayed action by action through :class:`~kc_sim.game.reference.RefRound`, and at every
draw the drawing seat's ``f(c) - mean of f over the stock`` added to its sums. Which seat
drew and which card are read off the round as it happens (whose hand grew, what left the
stock), not from the rule the compiled loop relies on; tests hold the two against each other.

The functions ``f``, as in ``kc_sim.core.rows.LUCK_FEATURES``, from the position just
before the draw: ``fit_now`` the card may be placed on some pile now; ``pen`` its penalty;
``pen_late`` the penalty term weighted by ``(cards gone from the deck + 1) / deck``;
``fit_hand`` it fits on a card of the drawing seat's hand, or one of those fits on it.
"""

from __future__ import annotations

from kc_sim.game.reference import RefRound, card_penalty, fits_on
from kc_sim.game.rules import RuleSet

STOP = 448


def _terms(ref: RefRound, hand: list[int], stock: list[int], deck_size: int) -> list[float]:
    """The four terms of drawing ``stock[0]`` into ``hand`` with the piles of ``ref``."""
    def f(c):
        return (float(any(ref.can_place(c, p) for p in range(8))), float(card_penalty(c, ref.rules.scoring)),
                float(any(fits_on(c, h) or fits_on(h, c) for h in hand)))

    values = [f(c) for c in stock]
    mean = [sum(v[j] for v in values) / len(values) for j in range(3)]
    mine = values[0]
    late = (deck_size - len(stock) + 1) / deck_size
    return [mine[0] - mean[0], mine[1] - mean[1], late * (mine[1] - mean[1]), mine[2] - mean[2]]


def _add(sums: list[float], terms: list[float]) -> None:
    for j, t in enumerate(terms):
        sums[j] += t


def reference_draw_sums(rules: RuleSet, players: int, dealer: int, deck: list[int],
                        actions: list[int]) -> list[list[float]]:
    """Per seat, the ``[fit_now, pen, pen_late, fit_hand]`` sums of the round dealt from ``deck``
    by ``dealer`` and played by ``actions`` (every action id, stops included, in order)."""
    ref = RefRound(rules, players, dealer, list(deck))
    sums = [[0.0] * 4 for _ in range(players)]
    if ref.drew is not None:                  # the first turn opened with a draw (draw=start)
        hand = list(ref.hand)
        hand.remove(ref.drew)
        _add(sums[ref.seat], _terms(ref, hand, [ref.drew] + ref.stock, len(deck)))
    for a in actions:
        stock, hands = list(ref.stock), [list(h) for h in ref.hands]
        pending = [_terms(ref, hands[s], stock, len(deck)) for s in range(players)] if a == STOP and stock else None
        ref.play(a)
        if pending is not None and len(ref.stock) < len(stock):
            drawer = next(s for s in range(players) if len(ref.hands[s]) > len(hands[s]))
            assert ref.hands[drawer].count(stock[0]) > hands[drawer].count(stock[0]), "drew another card than the next"
            _add(sums[drawer], pending[drawer])
    return sums
