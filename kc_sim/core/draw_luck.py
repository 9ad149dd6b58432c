"""Draw control variates: per round and seat, sums of ``f(c) - mean of f over the stock`` at
each card ``c`` the seat draws, which have expectation exactly 0 whatever the agents do
(:mod:`kc_sim.analysis.luck_adjusted` turns them into luck-adjusted estimates; docs/analysis.md).

Why the mean is 0: the deck is shuffled uniformly, so given everything that happened
before a draw (hands, piles, earlier draws, every decision) the next stock card is
uniform over the cards left in the stock. ``f(c) - mean_{c' in stock} f(c')`` then has
mean 0 given the past, for any ``f`` computed from the position before the draw, and so
has a sum of such terms over the draws of a round (a martingale stopped at the round's
end, at most 104 draws). No expectation has to be estimated.

The functions ``f`` (``kc_sim.core.rows.LUCK_FEATURES``, for the seat that draws):

* ``fit_now``: the card could be placed at once on a pile of the moment (it fits a top, or
  is a king and a corner is empty, or a side is empty and takes it);
* ``pen``: the card's penalty under the round's scoring (a king 10 under kings10);
* ``pen_late``: ``pen`` weighted by ``(stock position + 1) / deck``: a card drawn late is
  more likely still in hand at the end;
* ``fit_hand``: the card fits on a card of the seat's hand, or one of them fits on it.

Computed only when asked: the round loop (:mod:`kc_sim.core.loop`) calls
:func:`terms_before_stop` before each stop when given a sums array, and compiles without it
otherwise (numba prunes the branch for ``None``), so default play runs the code it always
did. Under ``draw=end`` the seat that stops draws next; under ``draw=start`` the next seat
draws as its turn opens (:func:`deal_with_terms` takes the first turn's draw); the piles do
not change between the stop and the draw. ``draw=if_stuck`` is not supported (refused by
the callers).
"""

import numba as nb
import numpy as np

from kc_sim.core.bits import lowest
from kc_sim.core.kernel import kernel
from kc_sim.core.layout import FIRST, HAND, MAX_SEATS, N_ACTIONS, N_PILES, PLAYERS, RULES, SEAT, STATE_SIZE, STOCK, STOCK_LEN, STOCK_POS, STOP
from kc_sim.core.legal import target_mask
from kc_sim.core.rows import C_LUCK, LUCK_FEATURES, LUCK_SCALE, N_LUCK  # noqa: F401 - LUCK_FEATURES re-exported
from kc_sim.core.step import FACE_VALUE, apply, deal_stock, open_turn, shuffle_stock
from kc_sim.game.cards import FITS_ON, KING, N_CARDS, RANK
from kc_sim.game.variants import R_DECKS, R_DRAW, R_SCORING, Draw, Scoring

#: ON[c]: the cards that card c fits on (the transpose of FITS_ON)
ON = np.array([sum(1 << t for t in range(N_CARDS) if (int(FITS_ON[t]) >> c) & 1) for c in range(N_CARDS)],
              dtype=np.int64)


@nb.njit(cache=True, inline="always")
def card_penalty(c, scoring):
    """One card's penalty: kings10 (K 10, others 1) or face (K Q J 10 count 10, A 1, others their number)."""
    if scoring == Scoring.KINGS10:
        return 10.0 if RANK[c] == KING else 1.0
    return float(FACE_VALUE[RANK[c]])


@kernel
def add_draw_terms(st, s, sums):
    """``sums[s, j] += f_j(c) - mean of f_j over the stock`` for the next stock card ``c``,
    drawn by seat ``s`` in the position ``st`` (nothing when the stock is empty)."""
    pos, n = st[STOCK_POS], st[STOCK_LEN]
    if pos >= n:
        return
    now = np.int64(0)
    for p in range(N_PILES):
        now |= target_mask(st, p)
    m = st[HAND + 2 * s] | st[HAND + 2 * s + 1]
    near = np.int64(0)
    while m:
        h = lowest(m)
        near |= FITS_ON[h] | ON[h]
        m &= m - 1
    scoring = st[RULES + R_SCORING]
    t_now, t_pen, t_near = 0.0, 0.0, 0.0
    for i in range(pos, n):
        x = st[STOCK + i]
        t_now += (now >> x) & 1
        t_pen += card_penalty(x, scoring)
        t_near += (near >> x) & 1
    left = n - pos
    c = st[STOCK + pos]
    pen = card_penalty(c, scoring) - t_pen / left
    sums[s, 0] += ((now >> c) & 1) - t_now / left
    sums[s, 1] += pen
    sums[s, 2] += (pos + 1) / n * pen
    sums[s, 3] += ((near >> c) & 1) - t_near / left


@kernel
def terms_before_stop(st, sums):
    """Before the seat to act stops: the terms of the card its stop makes someone draw
    (itself under draw=end, the next seat as its turn opens under draw=start)."""
    rule = st[RULES + R_DRAW]
    if rule == Draw.END:
        add_draw_terms(st, st[SEAT], sums)
    elif rule == Draw.START:
        add_draw_terms(st, (st[SEAT] + 1) % st[PLAYERS], sums)


@kernel
def deal_with_terms(st, seed, players, dealer, rules, sums):
    """``step.deal`` with the sums cleared and the first turn's draw (draw=start) counted."""
    sums[:, :] = 0.0
    shuffle_stock(st, seed, rules[R_DECKS])
    deal_stock(st, players, dealer, rules)
    if rules[R_DRAW] == Draw.START:
        add_draw_terms(st, st[FIRST], sums)
    open_turn(st)


@kernel
def write_luck(sums, seat_map, players, out, row):
    """The sums of the round seats into ``out[row]``'s luck columns, by match seat, fixed point."""
    for s in range(players):
        for j in range(N_LUCK):
            out[row, C_LUCK + j * MAX_SEATS + seat_map[s]] = np.int64(np.round(sums[s, j] * LUCK_SCALE))


@nb.njit(cache=True)
def luck_of_log(seed, players, dealer, rules, events, sums):
    """The sums of a round played elsewhere (the Python loop), from its event log (action ids
    among turn events, ``kc_sim.core.loop``): dealt again and replayed, each stop's terms
    taken as the compiled loop takes them."""
    st = np.zeros(STATE_SIZE, dtype=np.int64)
    deal_with_terms(st, seed, players, dealer, rules, sums)
    for ev in events:
        if ev < N_ACTIONS:
            if ev == STOP:
                terms_before_stop(st, sums)
            apply(st, ev)
