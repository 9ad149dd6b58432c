"""Which actions are legal: placements, whole-side-pile moves and stop (docs/rules.md, Actions).

The rule, in short:

* **place** a hand card on a pile with cards when it fits the top (one rank lower, the
  other colour; nothing goes on an ace); on an empty corner only a king; on an empty side
  any card (no king with ``king_on_empty_side=false``);
* **move_pile**: a whole side pile (never a corner) onto a pile with cards when its base
  fits that top, or onto an empty corner when its base is a king; never onto an empty
  side or onto itself;
* **stop** is always legal while the round runs, except with ``must_play_kings=true``
  while a king is in hand and a corner is empty.

Ids (``kc_sim.game.actions``): ``place_id(c, p)`` 0..415, ``move_id(s, p)`` 416..447, ``STOP`` 448;
piles 0..3 the sides N E S W, 4..7 the corners NE SE SW NW.

The rules are four primitives: ``target_mask`` (which cards pile p takes), ``can_move``
(may side pile s move onto pile p), ``stop_legal``, and the empty-pile helpers they use.
Everything works on masks: "the hand cards that may go on pile p" is the hand masked
with the pile's target mask (``place_mask``), and the legal pile moves are one 32-bit
mask (``move_mask``, bit ``move_id(s, p) - MOVE_BASE``), so a decision never lists
action objects. Those two are the one enumeration of the legal plays: ``count_plays``,
``nth_play``, ``has_play`` and ``legal_mask`` read them (``count_moves`` keeps a faster
one-deck count, tested against ``move_mask`` in tests/core/test_enumerator.py).
"""

import numba as nb
import numpy as np

from kc_sim.core.bits import lowest, nth_bit, popcount
from kc_sim.core.ids import (
    id_card,
    id_pile,
    id_side,
    is_corner,
    is_place,
    move_id,
    place_id,
)
from kc_sim.core.kernel import kernel
from kc_sim.core.layout import (
    DONE,
    FIRST_CORNER,
    HAND,
    MOVE_BASE,
    N_ACTIONS,
    N_PILES,
    N_SIDES,
    PILE_BASE,
    PILE_TOP,
    RULES,
    SEAT,
    STOP,
)
from kc_sim.game.cards import (
    ALL_MASK,
    FITS_ON,
    FITS_UNDER,
    KING,
    KINGS_MASK,
    NON_KINGS_MASK,
    RANK,
)
from kc_sim.game.variants import R_DECKS, R_KING_ON_EMPTY_SIDE, R_MUST_PLAY_KINGS


@nb.njit(cache=True, inline="always")
def hand_mask(st, seat):
    """Cards the seat holds at least once."""
    return st[HAND + 2 * seat]


@nb.njit(cache=True, inline="always")
def empty_side_mask(st):
    """Cards an empty side takes: any card, or any but a king with king_on_empty_side=false."""
    if st[RULES + R_KING_ON_EMPTY_SIDE]:
        return np.int64(ALL_MASK)
    return np.int64(NON_KINGS_MASK)


@nb.njit(cache=True, inline="always")
def target_mask(st, p):
    """Cards that may be placed on pile p: those fitting its top; on an empty corner only
    kings; on an empty side any card (no king with king_on_empty_side=false)."""
    top = st[PILE_TOP + p]
    if top >= 0:
        return FITS_ON[top]
    if is_corner(p):
        return KINGS_MASK
    return empty_side_mask(st)


@nb.njit(cache=True, inline="always")
def can_move(st, s, p):
    """May the whole side pile s move onto pile p? Its base must fit p's top, or be a king
    when p is an empty corner; never onto an empty side or onto itself."""
    base = st[PILE_BASE + s]
    if base < 0 or p == s:
        return False
    top = st[PILE_TOP + p]
    if top >= 0:
        return ((FITS_ON[top] >> base) & 1) == 1
    return is_corner(p) and RANK[base] == KING


@nb.njit(cache=True, inline="always")
def first_empty_corner(st):
    """Index of the first empty corner (NE SE SW NW order), or -1."""
    for p in range(FIRST_CORNER, N_PILES):
        if st[PILE_TOP + p] < 0:
            return p
    return -1


@nb.njit(cache=True, inline="always")
def first_empty_side(st):
    """Index of the first empty side (N E S W order), or -1."""
    for p in range(N_SIDES):
        if st[PILE_TOP + p] < 0:
            return p
    return -1


@nb.njit(cache=True, inline="always")
def corner_empty(st):
    """True when some corner holds no pile."""
    return first_empty_corner(st) >= 0


@nb.njit(cache=True, inline="always")
def stop_legal(st):
    """Stopping is always allowed, except under must_play_kings while the player holds a
    king and a corner is empty."""
    if st[RULES + R_MUST_PLAY_KINGS] and hand_mask(st, st[SEAT]) & KINGS_MASK:
        return not corner_empty(st)
    return True


# --- the enumeration of the legal plays ------------------------------------------------------

@nb.njit(cache=True, inline="always")
def place_mask(st, hand, p):
    """The cards of ``hand`` that may be placed on pile p (placement ids ``place_id(c, p)``)."""
    return hand & target_mask(st, p)


@nb.njit(cache=True, inline="always")
def move_mask(st):
    """The legal whole-side-pile moves as a mask: bit ``move_id(s, p) - MOVE_BASE`` is set
    when side pile s may move onto pile p (so bits ascend in action-id order)."""
    mm = np.int64(0)
    for s in range(N_SIDES):
        if st[PILE_BASE + s] >= 0:
            for p in range(N_PILES):
                mm |= np.int64(can_move(st, s, p)) << (move_id(s, p) - MOVE_BASE)
    return mm


@kernel
def count_moves(st):
    """Number of legal whole-side-pile moves, ``popcount(move_mask(st))``. With one deck
    every pile top is a distinct card, so "piles whose top side pile s's base fits" is one
    AND with a mask of tops (plus the empty corners for a king); two decks may repeat a
    top, so they count ``can_move`` pair by pair, as ``move_mask`` does."""
    if st[RULES + R_DECKS] != 1:
        k = 0
        for s in range(N_SIDES):
            if st[PILE_BASE + s] >= 0:
                for p in range(N_PILES):
                    k += can_move(st, s, p)
        return k
    tops = 0
    empty_corners = 0
    for p in range(N_PILES):
        top = st[PILE_TOP + p]
        if top >= 0:
            tops |= np.int64(1) << top
        elif is_corner(p):
            empty_corners += 1
    k = 0
    for s in range(N_SIDES):
        base = st[PILE_BASE + s]
        if base >= 0:
            k += popcount(tops & FITS_UNDER[base])
            if RANK[base] == KING:
                k += empty_corners
    return k


@kernel
def count_plays(st):
    """Number of legal placements and pile moves (stop not counted) for the seat to act."""
    hand = hand_mask(st, st[SEAT])
    k = 0
    for p in range(N_PILES):
        k += popcount(place_mask(st, hand, p))
    return k + count_moves(st)


@kernel
def nth_play(st, n):
    """The n-th legal placement or pile move (0-based), -1 if there are fewer: placements
    pile by pile (cards ascending), then the moves in action-id order."""
    hand = hand_mask(st, st[SEAT])
    for p in range(N_PILES):
        m = place_mask(st, hand, p)
        k = popcount(m)
        if n < k:
            return place_id(nth_bit(m, n), p)
        n -= k
    mm = move_mask(st)
    if n < popcount(mm):
        return MOVE_BASE + nth_bit(mm, n)
    return -1


@kernel
def has_play(st):
    """True when the seat to act has at least one placement or pile move (``move_mask(st)
    != 0`` written to stop at the first legal move)."""
    hand = hand_mask(st, st[SEAT])
    for p in range(N_PILES):
        if place_mask(st, hand, p):
            return True
    for s in range(N_SIDES):
        if st[PILE_BASE + s] >= 0:
            for p in range(N_PILES):
                if can_move(st, s, p):
                    return True
    return False


@kernel
def is_legal(st, a):
    """Is action id ``a`` legal for the seat to act? (One id's entry of ``legal_mask``,
    checked directly.)"""
    if st[DONE] or a < 0 or a >= N_ACTIONS:
        return False
    if a == STOP:
        return stop_legal(st)
    if is_place(a):
        return ((place_mask(st, hand_mask(st, st[SEAT]), id_pile(a)) >> id_card(a)) & 1) == 1
    return can_move(st, id_side(a), id_pile(a))


@kernel
def legal_mask(st, out):
    """Fill the boolean vector ``out`` (length 449) with the legal-action mask."""
    out[:] = False
    if st[DONE]:
        return
    hand = hand_mask(st, st[SEAT])
    for p in range(N_PILES):
        m = place_mask(st, hand, p)
        while m:
            out[place_id(lowest(m), p)] = True
            m &= m - 1
    mm = move_mask(st)
    while mm:
        out[MOVE_BASE + lowest(mm)] = True
        mm &= mm - 1
    out[STOP] = stop_legal(st)
