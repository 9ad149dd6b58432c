"""How the turn search (:mod:`agents.search`) scores a possible end of the turn, and the lower
bounds it prunes with.

The evaluation (lower is better), in :func:`evaluate`, with the weights ``w``
(``DEFAULT_WEIGHTS`` = ``[W_PEN, W_OPEN, W_FREE, W_DEAD, W_MODE]`` = ``[10, 60, 5, 0, 2]``)::

    score = 64 * (W_PEN * penalty + W_FREE * free + W_DEAD * dead) + W_OPEN * opened * scale

* ``penalty``: the hand the seat keeps (10 per king and 1 per other card under
  ``kings10``, face values under ``face``); going out scores 0 and beats everything;
* ``opened``: the number of *unseen* cards (neither in the hand nor on the table: they are
  in other hands or the stock) that could be placed on what is left open: the tops, empty
  corners (kings) and empty sides (any card);
* ``scale`` (:func:`open_weight_scale`): 64 x the share of the unseen cards held by the
  next player (``W_MODE`` 2; 1: by all opponents; 0: always 64), i.e. how likely an opened
  card is to be used at once: openings weigh little early, when most unseen cards are in
  the stock, and fully once the stock is empty;
* ``free``: empty sides plus the side-pile moves left to the next player (each lets them
  free a side and dump any card there);
* ``dead``: kept non-king cards whose two parents are both buried on the table (weight 0
  by default: it never changed a decision in our tests).

A card shed is worth 640, an opened unseen card up to 3,840: the planner sheds
everything early in a round and, later, keeps back cards that would open two or more of
its opponent's likely cards.

The bounds: :func:`placeable_from` (the hand cards some continuation could still place) and
:func:`stuck_bound_reaches` (a lower bound on the score of every position below a node, with
:func:`fixed_targets`, the openings nothing below can close); see :mod:`agents.search`.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from agents.position import fits_on_set, pile_get, scan_piles, side_bases
from kc_sim.core.bits import lowest, popcount
from kc_sim.core.layout import HAND_N, N_PILES, N_SIDES, PLAYERS
from kc_sim.core.step import FACE_VALUE, penalty_of_masks
from kc_sim.game.cards import FITS_ON, FITS_UNDER, KING, KINGS_MASK, NON_KINGS_MASK, RANK

# evaluation weights (index into a weights array)
W_PEN, W_OPEN, W_FREE, W_DEAD, W_MODE = 0, 1, 2, 3, 4
#: the default weights (see the module doc): penalty, openings for the next player, free sides
DEFAULT_WEIGHTS = np.array([10, 60, 5, 0, 2], dtype=np.int64)

#: CARD_PEN[scoring, c]: the penalty of card c held at the end (kings10, face)
CARD_PEN = np.array([[10 if RANK[c] == KING else 1 for c in range(52)],
                     [FACE_VALUE[RANK[c]] for c in range(52)]], dtype=np.int64)


@nb.njit(cache=True)
def evaluate(h0, h1, tp, bp, unseen, table, side_ok, scoring, w, open_scale):
    """Score of ending the turn in this position (lower is better); see the module doc.
    The search scores its nodes with :func:`_score`, given the scan of the tops it has made."""
    tops, empty = scan_piles(tp)
    return _score(h0, h1, bp, tops, empty, fits_on_set(tops), unseen, table, side_ok, scoring, w, open_scale)


@nb.njit(cache=True)
def open_weight_scale(st, seat, unseen, mode):
    """How much an opening counts, x64: always 64 (mode 0), or 64 x the share of the unseen
    cards held by the opponents (mode 1) or by the next player (mode 2)."""
    if mode == 0:
        return np.int64(64)
    u = popcount(unseen)
    if u == 0:
        return np.int64(0)
    players = st[PLAYERS]
    held = 0
    if mode == 1:
        for s in range(players):
            if s != seat:
                held += st[HAND_N + s]
    else:
        held = st[HAND_N + (seat + 1) % players]
    return np.int64(64 * held // u)


@nb.njit(cache=True, inline="always")
def compact_penalty(h0, h1, scoring):
    """The penalty of a hand (two planes) under ``scoring``: kings10 counted here, face by the core."""
    if scoring == 0:                          # kings10: kings 10, others 1
        k = popcount(h0 & KINGS_MASK) + popcount(h1 & KINGS_MASK)
        return 9 * k + popcount(h0) + popcount(h1)
    return penalty_of_masks(h0, h1, scoring)


@nb.njit(cache=True, inline="always")
def _score(h0, h1, bp, tops, empty, fit, unseen, table, side_ok, scoring, w, open_scale):
    """:func:`evaluate` given the node's top mask, empty-pile mask and ``fits_on_set(tops)``."""
    return _score_pen(compact_penalty(h0, h1, scoring), h0, bp, tops, empty, fit, unseen, table, side_ok, w, open_scale)


@nb.njit(cache=True, inline="always")
def _score_pen(pen, h0, bp, tops, empty, fit, unseen, table, side_ok, w, open_scale):
    """:func:`_score` given the hand's penalty ``pen``."""
    if pen == 0 and h0 == 0:
        return np.int64(0)
    opened = popcount(unseen & open_targets(fit, empty, side_ok))
    return (64 * w[W_PEN] * pen + w[W_OPEN] * open_scale * opened
            + free_dead(h0, bp, tops, empty, table, w))


@nb.njit(cache=True, inline="always")
def open_targets(fit, empty, side_ok):
    """The cards the position leaves a place for: those fitting on a top, the kings when a
    corner is empty, every card an empty side takes when a side is empty."""
    targets = fit
    if (empty >> 4) != 0:
        targets |= np.int64(KINGS_MASK)
    if empty & 0xF:
        targets |= side_ok
    return targets


@nb.njit(cache=True, inline="always")
def free_dead(h0, bp, tops, empty, table, w):
    """The score's last two terms, ``64 (W_FREE free + W_DEAD dead)`` (module doc): never
    negative with non-negative weights, so the search first checks whether the penalty and
    the openings alone already keep a node out of the k best and only then counts these."""
    ec = (empty >> 4) != 0
    free = popcount(empty & 0xF)
    for s in range(N_SIDES):
        b = pile_get(bp, s)
        if b >= 0:
            free += popcount(FITS_UNDER[b] & tops)
            if ec and RANK[b] == KING:
                free += 1
    dead = 0
    if w[W_DEAD] != 0:
        rest = h0 & np.int64(NON_KINGS_MASK)
        buried = table & ~tops
        while rest:
            c = lowest(rest)
            rest &= rest - 1
            par = FITS_UNDER[c]
            if (par & buried) == par:
                dead += 1
    return 64 * (w[W_FREE] * free + w[W_DEAD] * dead)


@nb.njit(cache=True, inline="always")
def placeable_from(h0, tops, empty, bp, fit, side_ok):
    """The hand cards (plane 0) that some continuation of the turn could still place: an
    over-approximation. With an empty side, or a side pile that some move could free (its
    base fits under a top or a hand card, or it is a king and a corner is empty), every card
    an empty side takes; kings with an empty corner; then, repeatedly, the cards that fit
    on a top or on a card found so far (tops only ever become hand cards)."""
    ec = (empty >> 4) != 0
    # a side base fits under a top or hand card (it is in fits_on_set of them), or is a king
    freeable = fit | fits_on_set(h0) | (np.int64(KINGS_MASK) if ec else np.int64(0))
    side = (empty & 0xF) != 0 or (side_bases(bp) & freeable) != 0
    p = h0 & fit
    if side:
        p |= h0 & side_ok
    if ec:
        p |= h0 & np.int64(KINGS_MASK)
    while True:
        q = p | (h0 & fits_on_set(p))
        if q == p:
            return p
        p = q


@nb.njit(cache=True, inline="always")
def stuck_bound_reaches(h0, h1, tp, tops, empty, bp, fit, side_ok, scoring, pen_w, ow, unseen, worst):
    """Whether a lower bound on the score of every position below this one already scores
    no better than ``worst``: the weighted penalty of the hand cards no continuation can
    place (:func:`placeable_from`) plus, when some card is stuck, the openings nothing below
    can close (:func:`fixed_targets`, a subset of ``fit`` and the kings: its cost is
    skipped when the answer is already known without it)."""
    p = placeable_from(h0, tops, empty, bp, fit, side_ok)
    if p == h0:
        return worst <= 0             # going out may be possible: it scores 0
    lb = pen_w * compact_penalty(h0 & ~p, h1 & ~p, scoring)
    if ow > 0:
        if lb >= worst:
            return True
        if lb + ow * popcount(unseen & (fit | np.int64(KINGS_MASK))) < worst:
            return False
        lb += ow * popcount(unseen & fixed_targets(h0, tp, bp, tops, empty))
    return lb >= worst


@nb.njit(cache=True, inline="always")
def fixed_targets(h0, tp, bp, tops, empty):
    """Cards every end of the turn below this position still lets be placed: those fitting
    on a top that nothing can cover (no hand card fits on it, no side pile could be moved
    onto it, and it is not a side pile that could itself be moved away), and the kings
    when a corner is empty and no king (in hand or at the base of a side pile) could fill it."""
    targets = np.int64(0)
    king_src = (h0 & np.int64(KINGS_MASK)) != 0
    under = np.int64(0)                     # the cards some side pile could be moved onto
    for s in range(N_SIDES):
        b = pile_get(bp, s)
        if b >= 0:
            under |= FITS_UNDER[b]
            if RANK[b] == KING:
                king_src = True
    ec = (empty >> 4) != 0
    for p in range(N_PILES):
        t = pile_get(tp, p)
        if t < 0:
            continue
        if (FITS_ON[t] & h0) != 0 or ((under >> t) & 1) != 0:
            continue
        if p < N_SIDES:
            b = pile_get(bp, p)
            if (FITS_UNDER[b] & (tops | h0)) != 0 or (ec and RANK[b] == KING):
                continue
        targets |= FITS_ON[t]
    if ec and not king_src:
        targets |= np.int64(KINGS_MASK)
    return targets
