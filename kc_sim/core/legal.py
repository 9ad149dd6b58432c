"""Which actions are legal: placements, whole-side-pile moves and stop (docs/rules.md, Actions).

Everything works on masks: "the hand cards that may go on pile p" is the hand
masked with the pile's target mask, so a decision never lists action objects.
"""

import numba as nb
import numpy as np

from kc_sim.core.bits import lowest, nth_bit, popcount
from kc_sim.core.layout import (
    DONE,
    HAND,
    MOVE_BASE,
    N_ACTIONS,
    N_PILES,
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
from kc_sim.game.rules import R_DECKS, R_KING_ON_EMPTY_SIDE, R_MUST_PLAY_KINGS


@nb.njit(cache=True, inline="always")
def hand_mask(st, seat):
    """Cards the seat holds at least once."""
    return st[HAND + 2 * seat]


@nb.njit(cache=True, inline="always")
def target_mask(st, p):
    """Cards that may be placed on pile p: those fitting its top; on an empty corner only
    kings; on an empty side any card (no king with king_on_empty_side=false)."""
    top = st[PILE_TOP + p]
    if top >= 0:
        return FITS_ON[top]
    if p >= 4:
        return KINGS_MASK
    if st[RULES + R_KING_ON_EMPTY_SIDE]:
        return ALL_MASK
    return NON_KINGS_MASK


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
    return p >= 4 and RANK[base] == KING


@nb.njit(cache=True, inline="always")
def corner_empty(st):
    """True when some corner holds no pile."""
    for p in range(4, 8):
        if st[PILE_TOP + p] < 0:
            return True
    return False


@nb.njit(cache=True, inline="always")
def stop_legal(st):
    """Stopping is always allowed, except under must_play_kings while the player holds a
    king and a corner is empty."""
    if st[RULES + R_MUST_PLAY_KINGS] and hand_mask(st, st[SEAT]) & KINGS_MASK:
        return not corner_empty(st)
    return True


@nb.njit(cache=True)
def count_moves(st):
    """Number of legal whole-side-pile moves. With one deck every pile top is a distinct
    card, so "piles whose top side pile s's base fits" is one AND with a mask of tops; two
    decks may repeat a top, so they count pile by pile."""
    if st[RULES + R_DECKS] != 1:
        k = 0
        for s in range(4):
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
        elif p >= 4:
            empty_corners += 1
    k = 0
    for s in range(4):
        base = st[PILE_BASE + s]
        if base >= 0:
            k += popcount(tops & FITS_UNDER[base])
            if RANK[base] == KING:
                k += empty_corners
    return k


@nb.njit(cache=True)
def count_plays(st):
    """Number of legal placements and pile moves (stop not counted) for the seat to act."""
    hand = hand_mask(st, st[SEAT])
    k = 0
    for p in range(N_PILES):
        k += popcount(hand & target_mask(st, p))
    return k + count_moves(st)


@nb.njit(cache=True)
def nth_play(st, n):
    """The n-th legal placement or pile move (0-based) in action-id order within each
    group: placements pile by pile, then moves."""
    hand = hand_mask(st, st[SEAT])
    for p in range(N_PILES):
        m = hand & target_mask(st, p)
        k = popcount(m)
        if n < k:
            return nth_bit(m, n) * 8 + p
        n -= k
    for s in range(4):
        if st[PILE_BASE + s] >= 0:
            for p in range(N_PILES):
                if can_move(st, s, p):
                    if n == 0:
                        return MOVE_BASE + s * 8 + p
                    n -= 1
    return -1


@nb.njit(cache=True)
def has_play(st):
    """True when the seat to act has at least one placement or pile move."""
    hand = hand_mask(st, st[SEAT])
    for p in range(N_PILES):
        if hand & target_mask(st, p):
            return True
    for s in range(4):
        for p in range(N_PILES):
            if can_move(st, s, p):
                return True
    return False


@nb.njit(cache=True)
def is_legal(st, a):
    """Is action id ``a`` legal for the seat to act?"""
    if st[DONE] or a < 0 or a >= N_ACTIONS:
        return False
    if a == STOP:
        return stop_legal(st)
    if a < MOVE_BASE:
        return (((hand_mask(st, st[SEAT]) & target_mask(st, a & 7)) >> (a >> 3)) & 1) == 1
    m = a - MOVE_BASE
    return can_move(st, m >> 3, m & 7)


@nb.njit(cache=True)
def legal_mask(st, out):
    """Fill the boolean vector ``out`` (length 449) with the legal-action mask."""
    out[:] = False
    if st[DONE]:
        return
    hand = hand_mask(st, st[SEAT])
    for p in range(N_PILES):
        m = hand & target_mask(st, p)
        while m:
            out[lowest(m) * 8 + p] = True
            m &= m - 1
    for s in range(4):
        for p in range(N_PILES):
            if can_move(st, s, p):
                out[MOVE_BASE + s * 8 + p] = True
    out[STOP] = stop_legal(st)
