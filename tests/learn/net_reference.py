"""The network policy as it was before it was made faster (kc-sim's ``actions`` features and
the forward pass, written plainly): the reference that tests/learn/test_net_speed.py holds
:mod:`kc_sim.net.features` and :func:`kc_sim.net.policy.net_act` to, decision by
decision. Change a feature there, change it here.
"""

import numba as nb
import numpy as np

from kc_sim.core import layout as L
from kc_sim.core.bits import lowest, popcount
from kc_sim.core.ids import id_card, id_pile, id_side, is_place
from kc_sim.core.legal import empty_side_mask, move_mask, place_mask, stop_legal
from kc_sim.core.step import penalty_of_masks
from kc_sim.net.features import F_ACT, F_CTX
from kc_sim.game.cards import ALL_MASK, FITS_ON, FITS_UNDER, KING, KINGS_MASK, RANK
from kc_sim.game.variants import R_SCORING

# the decision's workspace (int64, WS_SIZE): the tops and bases (changed and restored while an
# action is looked at), the hand's planes, and what every action of the decision shares
W_TOPS, W_BASES, W_H0, W_H1, W_UNSEEN, W_SIDE_OK, W_OPENED, W_PLAYS, W_BLOCK, W_SCORING = 0, 8, 16, 17, 18, 19, 20, 21, 22, 23
W_SHARE = 24      # next_share x 2**20, as an integer
REF_WS_SIZE = 25
_SHARE_ONE = 1 << 20


@nb.njit(cache=False, inline="always")
def _targets(ws):
    """The cards some pile takes (tops in ws): what fits a top, kings on an empty corner, what
    an empty side takes."""
    m = np.int64(0)
    for p in range(L.N_PILES):
        t = ws[W_TOPS + p]
        if t >= 0:
            m |= FITS_ON[t]
        elif p < L.N_SIDES:
            m |= ws[W_SIDE_OK]
        else:
            m |= np.int64(KINGS_MASK)
    return m


@nb.njit(cache=False, inline="always")
def _fits_on_any(m):
    """The cards that fit on some card of the mask ``m``."""
    out = np.int64(0)
    while m:
        out |= FITS_ON[lowest(m)]
        m &= m - 1
    return out


@nb.njit(cache=False, inline="always")
def _free(ws):
    """(empty sides, empty corners, side-pile moves) of the piles in ws: what a player can use
    to free a side or fill a corner."""
    tops = np.int64(0)
    es = 0
    ec = 0
    for p in range(L.N_PILES):
        t = ws[W_TOPS + p]
        if t >= 0:
            tops |= np.int64(1) << t
        elif p < L.N_SIDES:
            es += 1
        else:
            ec += 1
    moves = 0
    for s in range(L.N_SIDES):
        b = ws[W_BASES + s]
        if b >= 0:
            moves += popcount(FITS_UNDER[b] & tops)
            if ec > 0 and RANK[b] == KING:
                moves += 1
    return es, ec, moves


@nb.njit(cache=False)
def ref_begin_decision(st, seat, plays, ws, ctx):
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
    opened = popcount(unseen & _targets(ws))
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
    ctx[10] = penalty_of_masks(h0, h1, ws[W_SCORING]) / 20.0
    ctx[11] = min(plays / 8.0, 2.0)


@nb.njit(cache=False, inline="always")
def _after_features(ws, x, h0, h1, scoring, placed):
    """The features of the position after the action (``ws``'s piles already changed, the
    hand ``h0``, ``h1``; ``placed`` the card placed, -1 for none): ``x[7:21]``."""
    hand = h0 | h1
    pen = penalty_of_masks(h0, h1, scoring)
    x[7] = pen / 20.0
    n_cards = popcount(h0) + popcount(h1)
    x[8] = n_cards / 10.0
    x[9] = 1.0 if n_cards == 0 else 0.0
    targets = _targets(ws)
    x[10] = popcount(hand & targets) / 5.0
    es, ec, moves = _free(ws)
    side = es > 0
    if not side:                          # a side pile that can move frees a side
        for s2 in range(L.N_SIDES):
            b = ws[W_BASES + s2]
            if b >= 0 and ((FITS_UNDER[b] & hand) != 0 or (ec > 0 and RANK[b] == KING)):
                side = True
    reach = hand & targets
    if side:
        reach |= hand & ws[W_SIDE_OK]
    while True:
        more = reach | (hand & _fits_on_any(reach))
        if more == reach:
            break
        reach = more
    x[11] = popcount(reach) / 5.0
    stuck0 = h0 & ~reach
    stuck1 = h1 & ~reach
    x[12] = penalty_of_masks(stuck0, stuck1, scoring) / 20.0
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


@nb.njit(cache=False)
def ref_action_features(a, ws, x):
    """Fill ``x`` (float[F_ACT]) with the features of the legal action ``a`` in the decision of
    ``ws`` (see :func:`begin_decision`); ``ws``'s piles are changed while it looks and restored."""
    for i in range(F_ACT):
        x[i] = 0.0
    h0 = ws[W_H0]
    h1 = ws[W_H1]
    scoring = ws[W_SCORING]
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
        pen_c = penalty_of_masks(bit, np.int64(0), scoring)
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
    _after_features(ws, x, h0, h1, scoring, placed)
    if p1 >= 0:                           # restore the piles
        ws[W_TOPS + p1] = t1
        ws[W_BASES + p1] = b1
    if p2 >= 0:
        ws[W_TOPS + p2] = t2
        ws[W_BASES + p2] = b2


# --- the forward pass and the policy ---

@nb.njit(cache=False, inline="always")
def _context(params, ctx, hc):
    """hc = ctx @ Wc (H1 values)."""
    h1 = np.int64(params[0])
    for j in range(h1):
        hc[j] = 0.0
    for k in range(F_CTX):
        v = ctx[k]
        if v != 0.0:
            row = 2 + k * h1
            for j in range(h1):
                hc[j] += v * params[row + j]


@nb.njit(cache=False, inline="always")
def _dot_relu(params, at, v, n):
    """sum_j relu(v[j]) * params[at + j] over j < n, in a fixed order: sixteen running sums
    (sum l gets j = l, l + 16, ... below the last multiple of 16), added by halves (sum
    l + 8 to sum l, then l + 4, l + 2, l + 1), then the last n % 16 terms in order."""
    q = np.zeros(16, np.float32)
    nl = n - n % 16
    for j in range(nl):
        q[j % 16] += max(v[j], np.float32(0.0)) * params[at + j]
    k = 16
    while k > 1:
        k //= 2
        for i in range(k):
            q[i] += q[i + k]
    total = q[0]
    for j in range(nl, n):
        total += max(v[j], np.float32(0.0)) * params[at + j]
    return total


@nb.njit(cache=False, inline="always")
def _score(params, hc, x, h, g):
    """q of one action with features ``x``, given the decision's ``hc`` (scratch ``h``, ``g``)."""
    h1 = np.int64(params[0])
    h2 = np.int64(params[1])
    wa = 2 + F_CTX * h1
    for j in range(h1):
        h[j] = hc[j]
    for k in range(F_ACT):
        v = x[k]
        if v != 0.0:
            row = wa + k * h1
            for j in range(h1):
                h[j] += v * params[row + j]
    at = wa + F_ACT * h1
    if h2 > 0:
        b2 = at + h1 * h2
        for j in range(h2):
            g[j] = params[b2 + j]
        for i in range(h1):
            v = h[i]
            if v > 0.0:
                row = at + i * h2
                for j in range(h2):
                    g[j] += v * params[row + j]
        wo = b2 + h2
        return params[wo + h2] + _dot_relu(params, wo, g, h2)
    return params[at + h1] + _dot_relu(params, at, h, h1)


@nb.njit(cache=False)
def ref_net_act(st, seat, params, ws):
    """The policy: the legal action of highest score, or stop when nothing can be placed or
    moved. ``ws``: an int64 workspace of at least ``WS_SIZE``."""
    hand = st[L.HAND + 2 * seat]
    plays = 0
    for p in range(L.N_PILES):
        plays += popcount(place_mask(st, hand, p))
    mm = move_mask(st)
    plays += popcount(mm)
    if plays == 0:
        return L.STOP
    h1 = np.int64(params[0])
    hm = max(h1, np.int64(params[1]))
    buf = np.empty(F_CTX + F_ACT + 2 * h1 + hm, np.float32)
    ctx = buf[:F_CTX]
    x = buf[F_CTX:F_CTX + F_ACT]
    hc = buf[F_CTX + F_ACT:F_CTX + F_ACT + h1]
    h = buf[F_CTX + F_ACT + h1:F_CTX + F_ACT + 2 * h1]
    g = buf[F_CTX + F_ACT + 2 * h1:]
    ref_begin_decision(st, seat, plays, ws, ctx)
    _context(params, ctx, hc)
    best = L.STOP
    top = -np.inf
    for p in range(L.N_PILES):
        m = place_mask(st, hand, p)
        while m:
            a = lowest(m) * 8 + p
            m &= m - 1
            ref_action_features(a, ws, x)
            q = _score(params, hc, x, h, g)
            if q > top:
                top, best = q, a
    while mm:
        a = L.MOVE_BASE + lowest(mm)
        mm &= mm - 1
        ref_action_features(a, ws, x)
        q = _score(params, hc, x, h, g)
        if q > top:
            top, best = q, a
    if stop_legal(st):
        ref_action_features(L.STOP, ws, x)
        q = _score(params, hc, x, h, g)
        if q > top:
            best = L.STOP
    return best


