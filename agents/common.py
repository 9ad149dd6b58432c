"""Compiled helpers shared by the built-in agents.

Everything here reads only what the seat to act may see: its own hand
(``st[HAND + 2 * seat]``), the piles (tops, bases) and the rule switches. All
choices are deterministic, with fixed tie-breaks:

* a card choice takes the **highest rank**, and among cards of that rank the
  **lowest card id** (suit order C D H S);
* a pile choice for a placement takes the **first non-empty pile** (index order
  N E S W NE SE SW NW) whose top the card fits, else the **first empty corner**
  (kings only), else the **first empty side**;
* a pile move is the first legal one in action-id order (side N E S W, then
  target pile N E S W NE SE SW NW).
"""

import numba as nb
import numpy as np

from kc_sim.core.bits import lowest
from kc_sim.core.layout import HAND, MOVE_BASE, PILE_BASE, PILE_TOP, RULES
from kc_sim.core.legal import can_move, target_mask
from kc_sim.game.cards import ALL_MASK, FITS_ON, KING, NON_KINGS_MASK, RANK, RANK_MASK
from kc_sim.game.rules import R_KING_ON_EMPTY_SIDE


@nb.njit(cache=True, inline="always")
def own_hand(st, seat):
    """The seat's own cards (held at least once) as a 52-bit mask."""
    return st[HAND + 2 * seat]


@nb.njit(cache=True, inline="always")
def empty_side_mask(st):
    """Cards an empty side takes: any card, or any but a king with king_on_empty_side=false."""
    if st[RULES + R_KING_ON_EMPTY_SIDE]:
        return np.int64(ALL_MASK)
    return np.int64(NON_KINGS_MASK)


@nb.njit(cache=True, inline="always")
def placeable(st, hand):
    """The hand cards that may be placed somewhere now (union over the 8 piles)."""
    t = np.int64(0)
    for p in range(8):
        t |= target_mask(st, p)
    return hand & t


@nb.njit(cache=True, inline="always")
def highest_rank_card(m):
    """The highest-ranked card of a non-empty mask (lowest id among equal ranks), or -1."""
    for r in range(13, 0, -1):
        x = m & RANK_MASK[r]
        if x:
            return lowest(x)
    return -1


@nb.njit(cache=True, inline="always")
def best_pile(st, c):
    """Where card c goes: the first non-empty pile whose top it fits, else the first empty
    corner (a king), else the first empty side that takes it; -1 if none."""
    bit = np.int64(1) << c
    for p in range(8):
        top = st[PILE_TOP + p]
        if top >= 0 and FITS_ON[top] & bit:
            return p
    if RANK[c] == KING:
        for p in range(4, 8):
            if st[PILE_TOP + p] < 0:
                return p
    if empty_side_mask(st) & bit:
        for p in range(4):
            if st[PILE_TOP + p] < 0:
                return p
    return -1


@nb.njit(cache=True, inline="always")
def first_empty_corner(st):
    """Index of the first empty corner (4..7), or -1."""
    for p in range(4, 8):
        if st[PILE_TOP + p] < 0:
            return p
    return -1


@nb.njit(cache=True, inline="always")
def first_empty_side(st):
    """Index of the first empty side (0..3), or -1."""
    for p in range(4):
        if st[PILE_TOP + p] < 0:
            return p
    return -1


@nb.njit(cache=True, inline="always")
def first_move(st):
    """The first legal whole-side-pile move in action-id order, or -1."""
    for s in range(4):
        if st[PILE_BASE + s] >= 0:
            for p in range(8):
                if can_move(st, s, p):
                    return MOVE_BASE + s * 8 + p
    return -1


@nb.njit(cache=True, inline="always")
def greedy_action(st, seat):
    """The greedy choice, or -1 for stop: place the highest-ranked placeable card (see
    ``best_pile``); with nothing to place, make the first legal pile move if the freed side
    would take a card of the hand; else stop."""
    hand = own_hand(st, seat)
    m = placeable(st, hand)
    if m:
        c = highest_rank_card(m)
        return c * 8 + best_pile(st, c)
    if hand & empty_side_mask(st):
        return first_move(st)
    return -1
