"""The compact position the turn search works on (``agents.search``), and its moves.

A seat's turn depends only on its hand and the pile tops and bases (which cards lie
under a top never matters within a turn), so the search holds a position as four int64:
``h0, h1`` the hand's two planes (plane 1 = second copies with two decks) and ``tops``,
``bases`` the 8 piles packed 6 bits each (card + 1, 0 when empty). :func:`children`
lists the canonical legal plays of such a position (tested against the core's
``legal_mask`` in tests/agents/test_agent_rules.py) and :func:`apply_compact` plays one.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from kc_sim.core.bits import lowest
from kc_sim.core.ids import id_card, id_pile, id_side, is_place, move_id, place_id
from kc_sim.core.layout import FIRST_CORNER, HAND, N_PILES, N_SIDES, PILE_MASK, RULES
from kc_sim.game.cards import (
    ALL_MASK,
    FITS_ON,
    FITS_UNDER,
    KING,
    KINGS_MASK,
    N_CARDS,
    RANK,
    RANK_MASK,
)
from kc_sim.game.variants import R_DECKS

#: children listed per node at most (placements then moves)
MAX_CHILDREN = 96


@nb.njit(cache=True, inline="always")
def _mix(h, x):
    h ^= x + np.int64(0x5851F42D4C957F2D) + (h << 6) + (h >> 2)
    return h


@nb.njit(cache=True, inline="always")
def pile_get(x, p):
    """Card of pile p in a packed word of 8 piles (6 bits each, card + 1, 0 = empty); -1 if empty."""
    return ((x >> (6 * p)) & 63) - 1


@nb.njit(cache=True, inline="always")
def pile_set(x, p, c):
    """The packed word ``x`` with pile p set to card c (-1: empty)."""
    sh = 6 * p
    return (x & ~(np.int64(63) << sh)) | (np.int64(c + 1) << sh)


@nb.njit(cache=True)
def pack_piles(st, field):
    """The 8 tops (field PILE_TOP) or bases (PILE_BASE) of ``st`` as one packed word."""
    x = np.int64(0)
    for p in range(N_PILES):
        x |= np.int64(st[field + p] + 1) << (6 * p)
    return x


@nb.njit(cache=True)
def pos_hash(h0, h1, tops, bases):
    """A 63-bit hash of a compact position (never 0)."""
    h = np.int64(0x2545F4914F6CDD1D)
    h = _mix(h, h0)
    h = _mix(h, h1 * 31)
    h = _mix(h, tops)
    h = _mix(h, bases * 7919)
    h &= np.int64(0x7FFFFFFFFFFFFFFF)
    if h == 0:
        h = 1
    return h


@nb.njit(cache=True)
def unseen_mask(st, seat):
    """Cards the seat has not seen: neither in its hand nor anywhere on the table (with two
    decks: cards of which some copy is still unaccounted for)."""
    table = np.int64(0)
    for p in range(N_PILES):
        table |= st[PILE_MASK + p]
    h0 = st[HAND + 2 * seat]
    if st[RULES + R_DECKS] == 1:
        return np.int64(ALL_MASK) & ~(h0 | table)
    h1 = st[HAND + 2 * seat + 1]
    out = np.int64(0)
    for c in range(N_CARDS):
        seen = ((h0 >> c) & 1) + ((h1 >> c) & 1)
        for p in range(N_PILES):
            seen += (st[PILE_MASK + p] >> c) & 1
        if seen < 2:
            out |= np.int64(1) << c
    return out


@nb.njit(cache=True)
def children(h0, tp, bp, side_ok, out):
    """List the canonical legal placements and pile moves of a position into ``out``
    (highest-ranked card first); returns their number."""
    n = 0
    first_side = -1
    first_corner = -1
    for p in range(N_SIDES):
        if pile_get(tp, p) < 0:
            first_side = p
            break
    for p in range(FIRST_CORNER, N_PILES):
        if pile_get(tp, p) < 0:
            first_corner = p
            break
    # placements, by rank from king down
    fit = np.int64(0)
    tops = np.int64(0)
    for p in range(N_PILES):
        t = pile_get(tp, p)
        if t >= 0:
            fit |= FITS_ON[t]
            tops |= np.int64(1) << t
    placeable = h0 & fit
    if first_side >= 0:
        placeable |= h0 & side_ok
    if first_corner >= 0:
        placeable |= h0 & np.int64(KINGS_MASK)
    if placeable:
        for r in range(KING, 0, -1):
            m = placeable & RANK_MASK[r]
            while m:
                c = lowest(m)
                m &= m - 1
                bit = np.int64(1) << c
                if fit & bit:
                    par = FITS_UNDER[c] & tops
                    for p in range(N_PILES):
                        t = pile_get(tp, p)
                        if t >= 0 and (par >> t) & 1 and n < MAX_CHILDREN:
                            out[n] = place_id(c, p)
                            n += 1
                if r == KING and first_corner >= 0 and n < MAX_CHILDREN:
                    out[n] = place_id(c, first_corner)
                    n += 1
                if first_side >= 0 and (side_ok & bit) and n < MAX_CHILDREN:
                    out[n] = place_id(c, first_side)
                    n += 1
    # pile moves: only while the hand holds a card for the freed side
    if h0 & side_ok:
        for s in range(N_SIDES):
            b = pile_get(bp, s)
            if b < 0:
                continue
            if FITS_UNDER[b] & tops:
                for p in range(N_PILES):
                    if p != s and pile_get(tp, p) >= 0 and (FITS_UNDER[b] >> pile_get(tp, p)) & 1 and n < MAX_CHILDREN:
                        out[n] = move_id(s, p)
                        n += 1
            if RANK[b] == KING and first_corner >= 0 and n < MAX_CHILDREN:
                out[n] = move_id(s, first_corner)
                n += 1
    return n


@nb.njit(cache=True, inline="always")
def apply_compact(h0, h1, tp, bp, a):
    """Apply action a to the compact position; returns the new (h0, h1, tops, bases)."""
    if is_place(a):
        c = id_card(a)
        p = id_pile(a)
        bit = np.int64(1) << c
        if h1 & bit:
            h1 &= ~bit
        else:
            h0 &= ~bit
        if pile_get(tp, p) < 0:
            bp = pile_set(bp, p, c)
        tp = pile_set(tp, p, c)
    else:
        s = id_side(a)
        p = id_pile(a)
        if pile_get(tp, p) < 0:
            bp = pile_set(bp, p, pile_get(bp, s))
        tp = pile_set(tp, p, pile_get(tp, s))
        tp = pile_set(tp, s, -1)
        bp = pile_set(bp, s, -1)
    return h0, h1, tp, bp
