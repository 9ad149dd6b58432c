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

The rule helpers (``own_hand``, ``empty_side_mask``, ``first_empty_corner``,
``first_empty_side``) are the core's own (``kc_sim.core.legal``), re-exported here, so
the agents never restate a rule.
"""

import numba as nb
import numpy as np

from kc_sim.core.bits import lowest
from kc_sim.core.ids import place_id
from kc_sim.core.layout import MOVE_BASE, N_PILES, PILE_TOP
from kc_sim.core.legal import (  # noqa: F401 - re-exported: the agents' rule helpers are the core's
    empty_side_mask,
    first_empty_corner,
    first_empty_side,
    move_mask,
    target_mask,
)
from kc_sim.core.legal import hand_mask as own_hand
from kc_sim.game.cards import FITS_ON, KING, RANK, RANK_MASK


@nb.njit(cache=True, inline="always")
def placeable(st, hand):
    """The hand cards that may be placed somewhere now (union over the 8 piles)."""
    t = np.int64(0)
    for p in range(N_PILES):
        t |= target_mask(st, p)
    return hand & t


@nb.njit(cache=True, inline="always")
def highest_rank_card(m):
    """The highest-ranked card of a non-empty mask (lowest id among equal ranks), or -1."""
    for r in range(KING, 0, -1):
        x = m & RANK_MASK[r]
        if x:
            return lowest(x)
    return -1


@nb.njit(cache=True, inline="always")
def lowest_rank_card(m):
    """The lowest-ranked card of a non-empty mask (lowest id among equal ranks), or -1."""
    for r in range(1, KING + 1):
        x = m & RANK_MASK[r]
        if x:
            return lowest(x)
    return -1


@nb.njit(cache=True, inline="always")
def best_pile(st, c):
    """Where card c goes: the first non-empty pile whose top it fits, else the first empty
    corner (a king), else the first empty side that takes it; -1 if none."""
    bit = np.int64(1) << c
    for p in range(N_PILES):
        top = st[PILE_TOP + p]
        if top >= 0 and FITS_ON[top] & bit:
            return p
    if RANK[c] == KING:
        p = first_empty_corner(st)
        if p >= 0:
            return p
    if empty_side_mask(st) & bit:
        return first_empty_side(st)
    return -1


@nb.njit(cache=True, inline="always")
def first_move(st):
    """The first legal whole-side-pile move in action-id order, or -1."""
    mm = move_mask(st)
    if mm:
        return MOVE_BASE + lowest(mm)
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
        return place_id(c, best_pile(st, c))
    if hand & empty_side_mask(st):
        return first_move(st)
    return -1


@nb.njit(cache=True, inline="always")
def greedy_place(st, seat):
    """``greedy_action`` where no pile move is legal (its move step would give -1): the
    greedy placement, or -1. Its own function so that a caller that has just found no
    legal move (``pile-merger``) compiles without a second copy of ``first_move`` (about
    half of merger's compile from an empty cache). ``greedy_action`` keeps its own code:
    written as a call of this one, greedy self-play measured 6% slower."""
    m = placeable(st, own_hand(st, seat))
    if m:
        c = highest_rank_card(m)
        return place_id(c, best_pile(st, c))
    return -1
