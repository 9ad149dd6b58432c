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
from llvmlite import ir
from numba import types
from numba.core.extending import intrinsic

from kc_sim.core.bits import lowest
from kc_sim.core.ids import id_card, id_pile, id_side, is_place, move_id, place_id
from kc_sim.core.layout import FIRST_CORNER, N_PILES, N_SIDES
from kc_sim.game.cards import (
    FITS_UNDER,
    KING,
    KINGS_MASK,
    NON_KINGS_MASK,
    RANK,
)
from kc_sim.core.worlds import unseen_mask  # noqa: F401 (the search's and tests' import path)

#: children listed per node at most (placements then moves)
MAX_CHILDREN = 96


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


@nb.njit(cache=True, inline="always")
def ix(i):
    """An index as unsigned: numba then indexes without the negative-index wraparound (a
    shift, an AND and an add at each access), for the search's hot lookups."""
    return np.uint64(i)


# Zobrist keys of the compact position's features, in one array: a hand card c at 64 x
# plane + c, pile p's top at _ZT + 64 p + field and its base at _ZB + 64 p + field (field =
# card + 1; an empty pile's field 0 has key 0). Fixed random 63-bit words (seed 24).
_ZT = 128
_ZB = _ZT + 64 * N_PILES
_ZOB = np.random.default_rng(24).integers(1, 1 << 63, _ZB + 64 * N_PILES, dtype=np.int64)
for _p in range(N_PILES):
    _ZOB[_ZT + 64 * _p] = 0
    _ZOB[_ZB + 64 * _p] = 0


@nb.njit(cache=True, inline="always")
def _field(x, p):
    """Field p (card + 1, 0 = empty) of a packed word."""
    return (x >> (6 * p)) & 63


@nb.njit(cache=True)
def pos_hash(h0, h1, tops, bases):
    """The Zobrist hash of a compact position: the xor of the keys of its hand cards (each
    plane apart) and of each pile's top and base. :func:`hash_delta` gives the change an
    action makes, so the search hashes a child in a few loads instead of mixing four
    words. The table (``agents.search``) keys are this hash's low 63 bits (never 0:
    :func:`table_key`)."""
    h = np.int64(0)
    m = h0
    while m:
        h ^= _ZOB[lowest(m)]
        m &= m - 1
    m = h1
    while m:
        h ^= _ZOB[64 + lowest(m)]
        m &= m - 1
    for p in range(N_PILES):
        h ^= _ZOB[_ZT + 64 * p + _field(tops, p)] ^ _ZOB[_ZB + 64 * p + _field(bases, p)]
    return h


@nb.njit(cache=True, inline="always")
def hash_delta(h1, tp, bp, a):
    """What action ``a`` xors into :func:`pos_hash` of the position (hand plane 1, packed
    tops and bases; :func:`apply_compact` plays it). A placement takes card c out of
    plane 1 if it is there, else plane 0, and makes it the pile's top (and base, on an
    empty pile); a pile move makes the side's top the target's top (and its base the
    target's base, on an empty target) and empties the side."""
    p = id_pile(a)
    fp = _field(tp, p)
    if is_place(a):
        c = id_card(a)
        plane = (h1 >> c) & 1
        return (_ZOB[ix(64 * plane + c)] ^ _ZOB[ix(_ZT + 64 * p + fp)] ^ _ZOB[ix(_ZT + 64 * p + c + 1)]
                ^ _ZOB[ix(_ZB + 64 * p + (c + 1 if fp == 0 else 0))])
    s = id_side(a)
    fs = _field(tp, s)
    bs = _field(bp, s)
    return (_ZOB[ix(_ZT + 64 * p + fp)] ^ _ZOB[ix(_ZT + 64 * p + fs)] ^ _ZOB[ix(_ZT + 64 * s + fs)]
            ^ _ZOB[ix(_ZB + 64 * s + bs)] ^ _ZOB[ix(_ZB + 64 * p + (bs if fp == 0 else 0))])


@nb.njit(cache=True, inline="always")
def table_key(h):
    """The transposition table's key of hash ``h``: its low 63 bits, 1 for 0 (0 marks an empty slot)."""
    h &= np.int64(0x7FFFFFFFFFFFFFFF)
    return h if h != 0 else np.int64(1)


@intrinsic
def _ctlz(typingctx, x):
    if not isinstance(x, types.Integer):
        return None

    def codegen(context, builder, sig, args):
        return builder.ctlz(args[0], ir.Constant(ir.IntType(1), 0))

    return x(x), codegen


#: one bit per suit block at rank index 0 (card id = suit * 13 + rank - 1)
_RANK_BITS = np.int64(1 | (1 << 13) | (1 << 26) | (1 << 39))
_BLACK = np.int64(0x1FFF | (0x1FFF << 39))       # clubs and spades
_RED = np.int64((0x1FFF << 13) | (0x1FFF << 26))  # diamonds and hearts
_NON_KINGS = np.int64(NON_KINGS_MASK)


@nb.njit(cache=True, inline="always")
def fits_on_set(tops):
    """The cards that fit on some card of the mask ``tops`` (the union of ``FITS_ON``): one
    rank lower and the other colour, computed with shifts rather than a table per card."""
    lb = ((tops & _BLACK) >> 1) & _NON_KINGS          # black tops, one rank down (aces drop out)
    rb = (lb | (lb >> 39)) & 0x1FFF                    # ... as a set of ranks
    lr = ((tops & _RED) >> 1) & _NON_KINGS
    rr = ((lr >> 13) | (lr >> 26)) & 0x1FFF
    return (rb << 13) | (rb << 26) | rr | (rr << 39)


@nb.njit(cache=True, inline="always")
def scan_piles(tp):
    """(mask of the top cards, 8-bit mask of the empty piles) of a packed tops word."""
    tops = np.int64(0)
    empty = np.int64(0)
    for p in range(N_PILES):
        f = (tp >> (6 * p)) & 63
        tops |= (np.int64(1) << f) >> 1               # f = card + 1; 0 (empty) adds nothing
        if f == 0:
            empty |= np.int64(1) << p
    return tops, empty


@nb.njit(cache=True)
def children(h0, tp, bp, side_ok, out):
    """List the canonical legal placements and pile moves of a position into ``out``
    (highest-ranked card first); returns their number."""
    tops, empty = scan_piles(tp)
    return children_of(h0, tp, bp, tops, empty, fits_on_set(tops), side_ok, out, 0)


@nb.njit(cache=True, inline="always")
def side_bases(bp):
    """The mask of the side piles' base cards (packed bases ``bp``), without branches."""
    m = np.int64(0)
    for s in range(N_SIDES):
        m |= (np.int64(1) << ((bp >> (6 * s)) & 63)) >> 1     # field card + 1; 0 (empty) adds nothing
    return m


#: 1 in each of the 8 six-bit fields of a packed word, and each field's high bit, low bits
_REP6 = np.int64(0x041041041041)
_HI6 = np.int64(0x820820820820)
_LO6 = np.int64(0x7DF7DF7DF7DF)


@nb.njit(cache=True, inline="always")
def piles_topped_by(tp, t):
    """The piles whose top is card ``t``, as the high bits of their 6-bit fields (bit
    6 p + 5 for pile p): the fields of ``tp`` equal to t + 1, found with a SWAR zero test."""
    x = tp ^ (np.int64(t + 1) * _REP6)
    return ~(((x & _LO6) + _LO6) | x) & _HI6


@nb.njit(cache=True, inline="always")
def _piles_on(tp, par):
    """Union of :func:`piles_topped_by` over the cards of ``par``."""
    m = np.int64(0)
    while par:
        m |= piles_topped_by(tp, lowest(par))
        par &= par - 1
    return m


@nb.njit(cache=True, inline="always")
def children_of(h0, tp, bp, tops, empty, fit, side_ok, out, o):
    """:func:`children` with the position's top mask, empty-pile mask and ``fits_on_set(tops)``
    already known (the search computes them once per node); writes ``out[o:]``."""
    n = 0
    es = empty & 0xF
    ec = empty >> 4
    first_side = lowest(es) if es else -1
    first_corner = FIRST_CORNER + lowest(ec) if ec else -1
    placeable = h0 & fit
    if first_side >= 0:
        placeable |= h0 & side_ok
    if first_corner >= 0:
        placeable |= h0 & np.int64(KINGS_MASK)
    while placeable:
        # the highest rank present, then its cards in id order
        rs = (placeable | (placeable >> 13) | (placeable >> 26) | (placeable >> 39)) & 0x1FFF
        ri = 63 - _ctlz(rs)
        rm = _RANK_BITS << ri
        m = placeable & rm
        placeable &= ~rm
        while m:
            c = lowest(m)
            m &= m - 1
            bit = np.int64(1) << c
            if fit & bit:
                pm = _piles_on(tp, FITS_UNDER[ix(c)] & tops)      # pile order
                while pm and n < MAX_CHILDREN:
                    out[ix(o + n)] = place_id(c, lowest(pm) // 6)
                    n += 1
                    pm &= pm - 1
            if ri == KING - 1 and first_corner >= 0 and n < MAX_CHILDREN:
                out[ix(o + n)] = place_id(c, first_corner)
                n += 1
            if first_side >= 0 and (side_ok & bit) and n < MAX_CHILDREN:
                out[ix(o + n)] = place_id(c, first_side)
                n += 1
    # pile moves: only while the hand holds a card for the freed side, and only when some
    # side's base fits on a top (is in ``fit``) or is a king with a corner empty
    movable = fit | (np.int64(KINGS_MASK) if first_corner >= 0 else np.int64(0))
    if (h0 & side_ok) and (side_bases(bp) & movable):
        for s in range(N_SIDES):
            b = pile_get(bp, s)
            if b < 0:
                continue
            fu = FITS_UNDER[b] & tops
            if fu:
                pm = _piles_on(tp, fu) & ~(np.int64(1) << (6 * s + 5))
                while pm and n < MAX_CHILDREN:
                    out[ix(o + n)] = move_id(s, lowest(pm) // 6)
                    n += 1
                    pm &= pm - 1
            if RANK[b] == KING and first_corner >= 0 and n < MAX_CHILDREN:
                out[ix(o + n)] = move_id(s, first_corner)
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
