"""The ``actions`` encoding: features of each legal action, for policies that score actions
rather than action ids (the compiled network policy, :mod:`kc_sim.net.policy`).

A network with one output per action id must learn 449 lessons; here an action is described
by what it does, so one small network scores them all (as DouZero encodes a move as features
next to the state). Everything is computed from what the seat to act may see (its hand, the
piles, the hand sizes, the stock size and the header): the unseen cards are those in neither
its hand nor on the table.

Per decision, ``CTX`` (``F_CTX`` values, :func:`begin_decision`):

===============  ==============================================================================
name             value
===============  ==============================================================================
bias             1
stock            cards left in the stock / 52
hand             own cards / 10
next_hand        the next seat's cards / 10
min_hand         the fewest cards any other seat holds / 10
unseen           unseen cards / 52
next_share       the next seat's cards / unseen cards (how likely an opened card is theirs)
turn_actions     own actions this turn / 8, at most 1
would_block      1 if an idle turn now ends the round (stock empty, every other seat idle)
players          (players - 2) / 2
penalty          own hand penalty / 20
plays            legal placements and pile moves now / 8, at most 2
===============  ==============================================================================

Per legal action, ``ACT`` (``F_ACT`` values, :func:`action_features`), of the position right
after it (for ``stop``, the position the turn ends in):

===============  ==============================================================================
name             value
===============  ==============================================================================
stop, move       1 for a stop, for a whole-pile move (a placement has both 0)
shed             the penalty of the card placed / 10
rank             its rank / 13
king_to_corner   1 for a king placed on an empty corner
to_empty_side    1 for a card placed on an empty side
on_corner        1 for a card placed on a corner pile
penalty          own hand penalty after / 20
cards            own cards after / 10
out              1 if the hand is empty after (the round is won)
placeable        hand cards that could be placed at once after / 5
reach            hand cards some continuation of the turn could place / 5 (cards that fit a
                 target, then cards that fit those, ...; every card an empty side takes when a
                 side is empty or some side pile could move)
stuck_penalty    penalty of the other hand cards / 20
opened           unseen cards that fit some target after (a top, an empty corner for kings,
                 an empty side) / 13
opened_next      opened x next_share
opened_delta     (opened after - opened now) / 13
free             empty sides plus the side-pile moves the next seat could make / 4
empty_sides      / 4
empty_corners    / 4
kings            kings in hand after / 4
chain            hand cards that fit on the card placed / 2
plays_left       for a stop: the legal plays it leaves / 8 (0 otherwise)
stop_block       1 for a stop that ends the round blocked (would_block)
===============  ==============================================================================

With two decks the second copies count in the penalty and the card counts, and a card is
unseen only while no copy of it has been seen. The encoding's version is
``kc_sim.net.encodings.ENCODINGS["actions"]``: change a value here, raise it there.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from kc_sim.core import layout as L
from kc_sim.core.bits import lowest, popcount
from kc_sim.core.kernel import kernel
from kc_sim.core.ids import id_card, id_pile, id_side, is_place
from kc_sim.core.legal import empty_side_mask, move_mask, place_mask, stop_legal
from kc_sim.core.step import FACE_VALUE
from kc_sim.game.cards import (
    ALL_MASK,
    FITS_ON,
    FITS_UNDER,
    KING,
    KINGS_MASK,
    RANK,
)
from kc_sim.game.variants import R_SCORING, Scoring

__all__ = ["CTX", "ACT", "F_CTX", "F_ACT", "WS_SIZE", "begin_decision", "action_features", "legal_actions"]

CTX = ("bias", "stock", "hand", "next_hand", "min_hand", "unseen", "next_share", "turn_actions", "would_block",
       "players", "penalty", "plays")
ACT = ("stop", "move", "shed", "rank", "king_to_corner", "to_empty_side", "on_corner", "penalty", "cards", "out",
       "placeable", "reach", "stuck_penalty", "opened", "opened_next", "opened_delta", "free", "empty_sides",
       "empty_corners", "kings", "chain", "plays_left", "stop_block")
F_CTX = len(CTX)
F_ACT = len(ACT)

# the decision's workspace (int64, WS_SIZE): the tops and bases (changed and restored while an
# action is looked at), the hand's planes, and what every action of the decision shares
W_TOPS, W_BASES, W_H0, W_H1, W_UNSEEN, W_SIDE_OK, W_OPENED, W_PLAYS, W_BLOCK, W_SCORING = 0, 8, 16, 17, 18, 19, 20, 21, 22, 23
W_SHARE = 24      # next_share x 2**20, as an integer
W_PEN = 25        # own hand penalty
WS_SIZE = 26
_SHARE_ONE = 1 << 20


#: the cards of each suit as a 13-bit rank set (bit r - 1 for rank r)
_RANKS13 = (1 << 13) - 1
#: face-value scoring, bit by bit: _FACE_BITS[b] holds the cards whose face value has bit b
#: set, so a hand's penalty is the sum of 2**b x popcount(hand & _FACE_BITS[b])
_FACE_BITS = tuple(sum(1 << c for c in range(52) if (FACE_VALUE[RANK[c]] >> b) & 1) for b in range(4))


@nb.njit(cache=True, inline="always")
def _penalty(lo, hi, scoring):
    """``penalty_of_masks(lo, hi, scoring)`` (the same integer) without a loop over the ranks."""
    m0 = np.int64(lo)
    m1 = np.int64(hi)
    if scoring == Scoring.KINGS10:
        return 9 * (popcount(m0 & KINGS_MASK) + popcount(m1 & KINGS_MASK)) + popcount(m0) + popcount(m1)
    total = 0
    for b in range(4):
        fb = np.int64(_FACE_BITS[b])
        total += (popcount(m0 & fb) + popcount(m1 & fb)) << b
    return total


@nb.njit(cache=True, inline="always")
def _fits_on_any(m):
    """The cards that fit on some card of the mask ``m`` (the union of ``FITS_ON``), by shifts:
    a black card of rank r takes the red cards of rank r - 1, a red card the black ones."""
    black = (m | (m >> 39)) & _RANKS13           # clubs and spades as rank sets
    red = ((m >> 13) | (m >> 26)) & _RANKS13     # diamonds and hearts
    fb = black >> 1                               # one rank lower; an ace takes nothing
    fr = red >> 1
    return fr | (fr << 39) | (fb << 13) | (fb << 26)


@nb.njit(cache=True, inline="always")
def _piles(ws):
    """(targets, tops, empty sides, empty corners) of the piles in ws: the cards some pile
    takes (what fits a top, kings on an empty corner, what an empty side takes), and the mask
    of the tops."""
    targets = np.int64(0)
    tops = np.int64(0)
    es = 0
    ec = 0
    for p in range(L.N_PILES):
        t = ws[W_TOPS + p]
        if t >= 0:
            targets |= FITS_ON[t]
            tops |= np.int64(1) << t
        elif p < L.N_SIDES:
            es += 1
        else:
            ec += 1
    if es > 0:
        targets |= ws[W_SIDE_OK]
    if ec > 0:
        targets |= np.int64(KINGS_MASK)
    return targets, tops, es, ec


@nb.njit(cache=True, inline="always")
def _moves(ws, tops, ec, hand):
    """(side-pile moves, whether a side pile could move): the moves the piles in ws allow
    (what a player can use to free a side or fill a corner), and whether some side pile's
    base fits under a hand card or is a king while a corner is empty."""
    moves = 0
    movable = False
    for s in range(L.N_SIDES):
        b = ws[W_BASES + s]
        if b >= 0:
            moves += popcount(FITS_UNDER[b] & tops)
            king = ec > 0 and RANK[b] == KING
            if king:
                moves += 1
            if king or (FITS_UNDER[b] & hand) != 0:
                movable = True
    return moves, movable


@kernel
def legal_actions(st, seat, out):
    """The legal action ids of ``seat`` (the seat to act) into ``out`` (at least 449 long):
    placements pile by pile, then pile moves, then stop; returns their number."""
    hand = st[L.HAND + 2 * seat]
    n = 0
    for p in range(L.N_PILES):
        m = place_mask(st, hand, p)
        while m:
            out[n] = lowest(m) * 8 + p
            n += 1
            m &= m - 1
    mm = move_mask(st)
    while mm:
        out[n] = L.MOVE_BASE + lowest(mm)
        n += 1
        mm &= mm - 1
    if stop_legal(st):
        out[n] = L.STOP
        n += 1
    return n


@kernel
def begin_decision(st, seat, plays, ws, ctx):
    """Fill the workspace ``ws`` (int64[WS_SIZE]) and the context ``ctx`` (float[F_CTX]) of
    ``seat``'s decision; ``plays`` is the number of legal placements and pile moves."""
    players = st[L.PLAYERS]
    h0 = st[L.HAND + 2 * seat]
    h1 = st[L.HAND + 2 * seat + 1]
    table = np.int64(0)
    for p in range(L.N_PILES):
        ws[W_TOPS + p] = st[L.PILE_TOP + p]
        ws[W_BASES + p] = st[L.PILE_BASE + p]
        table |= st[L.PILE_MASK + p]
    ws[W_H0] = h0
    ws[W_H1] = h1
    unseen = np.int64(ALL_MASK) & ~(h0 | table)
    ws[W_UNSEEN] = unseen
    ws[W_SIDE_OK] = empty_side_mask(st)
    opened = popcount(unseen & _piles(ws)[0])
    ws[W_OPENED] = opened
    ws[W_PLAYS] = plays
    ws[W_SCORING] = st[L.RULES + R_SCORING]
    nxt = (seat + 1) % players
    u = popcount(unseen)
    share = min(st[L.HAND_N + nxt] / u, 1.0) if u > 0 else 0.0
    ws[W_SHARE] = np.int64(share * _SHARE_ONE)
    idle_now = st[L.TURN_ACTIONS] == 0 and st[L.DREW] < 0
    block = st[L.STOCK_LEN] <= st[L.STOCK_POS] and st[L.IDLE] >= players - 1 and idle_now
    ws[W_BLOCK] = 1 if block else 0
    fewest = 1000
    for s in range(players):
        if s != seat and st[L.HAND_N + s] < fewest:
            fewest = st[L.HAND_N + s]
    ctx[0] = 1.0
    ctx[1] = (st[L.STOCK_LEN] - st[L.STOCK_POS]) / 52.0
    ctx[2] = st[L.HAND_N + seat] / 10.0
    ctx[3] = st[L.HAND_N + nxt] / 10.0
    ctx[4] = fewest / 10.0
    ctx[5] = u / 52.0
    ctx[6] = share
    ctx[7] = min(st[L.TURN_ACTIONS] / 8.0, 1.0)
    ctx[8] = 1.0 if block else 0.0
    ctx[9] = (players - 2) / 2.0
    pen = _penalty(h0, h1, ws[W_SCORING])
    ws[W_PEN] = pen
    ctx[10] = pen / 20.0
    ctx[11] = min(plays / 8.0, 2.0)


@nb.njit(cache=True, inline="always")
def _after_features(ws, x, h0, h1, pen, placed):
    """The features of the position after the action (``ws``'s piles already changed, the
    hand ``h0``, ``h1`` of penalty ``pen``; ``placed`` the card placed, -1 for none):
    ``x[7:21]``."""
    hand = h0 | h1
    x[7] = pen / 20.0
    n_cards = popcount(h0) + popcount(h1)
    x[8] = n_cards / 10.0
    x[9] = 1.0 if n_cards == 0 else 0.0
    targets, tops, es, ec = _piles(ws)
    reach = hand & targets
    x[10] = popcount(reach) / 5.0
    moves, movable = _moves(ws, tops, ec, hand)
    if es > 0 or movable:                 # an empty side, or a side pile that can move frees one
        reach |= hand & ws[W_SIDE_OK]
    while True:
        more = reach | (hand & _fits_on_any(reach))
        if more == reach:
            break
        reach = more
    x[11] = popcount(reach) / 5.0
    x[12] = _penalty(h0 & ~reach, h1 & ~reach, ws[W_SCORING]) / 20.0
    opened = popcount(ws[W_UNSEEN] & targets)
    x[13] = opened / 13.0
    x[14] = x[13] * ws[W_SHARE] / _SHARE_ONE
    x[15] = (opened - ws[W_OPENED]) / 13.0
    x[16] = (es + moves) / 4.0
    x[17] = es / 4.0
    x[18] = ec / 4.0
    x[19] = (popcount(h0 & np.int64(KINGS_MASK)) + popcount(h1 & np.int64(KINGS_MASK))) / 4.0
    if placed >= 0:
        x[20] = popcount(hand & FITS_ON[placed]) / 2.0


@kernel
def action_features(a, ws, x):
    """Fill ``x`` (float[F_ACT]) with the features of the legal action ``a`` in the decision of
    ``ws`` (see :func:`begin_decision`); ``ws``'s piles are changed while it looks and restored."""
    for i in range(F_ACT):
        x[i] = 0.0
    h0 = ws[W_H0]
    h1 = ws[W_H1]
    pen = ws[W_PEN]
    p1 = -1                               # the piles changed, and what they held
    p2 = -1
    t1 = b1 = t2 = b2 = -1
    placed = -1
    if a == L.STOP:
        x[0] = 1.0
        x[21] = ws[W_PLAYS] / 8.0
        x[22] = float(ws[W_BLOCK])
    elif is_place(a):
        c = id_card(a)
        p = id_pile(a)
        placed = c
        bit = np.int64(1) << c
        if h1 & bit:
            h1 &= ~bit
        else:
            h0 &= ~bit
        pen_c = _penalty(bit, np.int64(0), ws[W_SCORING])
        pen -= pen_c
        x[2] = pen_c / 10.0
        x[3] = RANK[c] / 13.0
        top = ws[W_TOPS + p]
        if top < 0 and p >= L.N_SIDES:
            x[4] = 1.0
        elif top < 0:
            x[5] = 1.0
        elif p >= L.N_SIDES:
            x[6] = 1.0
        p1, t1, b1 = p, top, ws[W_BASES + p]
        if top < 0:
            ws[W_BASES + p] = c
        ws[W_TOPS + p] = c
    else:
        x[1] = 1.0
        s = id_side(a)
        p = id_pile(a)
        p1, t1, b1 = p, ws[W_TOPS + p], ws[W_BASES + p]
        p2, t2, b2 = s, ws[W_TOPS + s], ws[W_BASES + s]
        if t1 < 0:
            ws[W_BASES + p] = b2
        ws[W_TOPS + p] = t2
        ws[W_TOPS + s] = -1
        ws[W_BASES + s] = -1
    _after_features(ws, x, h0, h1, pen, placed)
    if p1 >= 0:                           # restore the piles
        ws[W_TOPS + p1] = t1
        ws[W_BASES + p1] = b1
    if p2 >= 0:
        ws[W_TOPS + p2] = t2
        ws[W_BASES + p2] = b2
