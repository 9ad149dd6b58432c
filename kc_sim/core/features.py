"""Deal features: numbers about a dealt round that are known before anyone plays, for
control variates (:mod:`kc_sim.analysis.variance`).

The method, in short: every deal is played by every line-up in every seating, so a
feature of "the hand of agent a" sums to zero over a deal's seatings and cannot explain
anything; what can is a feature of the *deal*, read by position at the table. Hands are
therefore described by their position in the turn order (``p0`` is the first player, the
one left of the dealer, ``p1`` the next, ...), which every agent occupies equally often.
A feature is a function of the deal seed, the dealer, the player count and the rules
alone; its expectation does not depend on the agents, so it can be estimated from deals
that are dealt but never played (:func:`expected_features`).

Features of the dealt position (before the first turn opens; see :func:`feature_names`):

* per position ``j``: ``kings_pj`` kings in the hand; ``fit_pj`` hand cards that can be
  placed at once on the layout (fitting a side's top, or a king when a corner is empty);
  ``chain_pj`` ordered pairs of hand cards where one fits on the other (cards that can be
  shed in a row); ``rank_pj`` the hand's mean rank (ace 1 ... king 13);
* the layout: ``layout_kings`` kings among the side bases and corners, ``layout_aces``
  aces on the sides (closed piles), ``merges`` side piles that can move at once (onto
  another pile, or a king base onto an empty corner), ``layout_rank`` mean rank of the
  side tops;
* the stock: ``stock_kings`` kings in the stock, ``soon_kings`` kings among the first
  ``players`` stock cards (drawn in the first round of turns), ``soon_fit`` of those
  cards, how many fit a side top of the layout.

All loops are compiled; dealing is the core's own (``step.shuffle_stock`` and
``step.deal_stock``), so the features see exactly the deal the rounds were played on.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from kc_sim.core.layout import (
    FIRST,
    FIRST_CORNER,
    HAND,
    N_PILES,
    N_SIDES,
    PILE_BASE,
    PILE_TOP,
    STATE_SIZE,
    STOCK,
    STOCK_LEN,
    STOCK_POS,
)
from kc_sim.core.rng import derive
from kc_sim.core.step import deal_stock, shuffle_stock
from kc_sim.game.cards import FITS_ON, KING, KINGS_MASK, N_CARDS, RANK
from kc_sim.game.variants import R_DECKS

#: features that do not depend on the player count, in column order after the per-position ones
TABLE_FEATURES = ("layout_kings", "layout_aces", "merges", "layout_rank", "stock_kings", "soon_kings", "soon_fit")
#: per-position features: one column each per position in the turn order (p0 plays first)
POSITION_FEATURES = ("kings", "fit", "chain", "rank")
#: stream of the deals dealt only to estimate the features' expectation (never played)
EXPECTATION_STREAM = 0x65787063


def feature_names(players: int) -> tuple[str, ...]:
    """Column names of :func:`deal_features` for ``players`` seats: the per-position
    features position by position (``kings_p0, fit_p0, ..., rank_p<k-1>``), then the table's."""
    return tuple(f"{f}_p{j}" for j in range(int(players)) for f in POSITION_FEATURES) + TABLE_FEATURES


def n_features(players: int) -> int:
    return len(POSITION_FEATURES) * int(players) + len(TABLE_FEATURES)


@nb.njit(cache=True)
def _hand_cards(st, seat, cards):
    """Card ids of a seat's hand (a card held twice listed twice) into ``cards``; their number."""
    n = 0
    for plane in range(2):
        m = st[HAND + 2 * seat + plane]
        for c in range(N_CARDS):
            if (m >> c) & 1:
                cards[n] = c
                n += 1
    return n


@nb.njit(cache=True)
def features_of_state(st, players, out):
    """Fill ``out`` (length :func:`n_features`) with the features of a freshly dealt state."""
    corner_empty = False
    for p in range(FIRST_CORNER, N_PILES):
        if st[PILE_TOP + p] < 0:
            corner_empty = True
    side_fit = np.int64(0)                   # cards that fit some side top
    for s in range(N_SIDES):
        t = st[PILE_TOP + s]
        if t >= 0:
            side_fit |= FITS_ON[t]
    target = side_fit | (np.int64(KINGS_MASK) if corner_empty else np.int64(0))
    _position_features(st, players, target, out)
    _table_features(st, players, corner_empty, side_fit, out, 4 * players)   # after 4 per position


@nb.njit(cache=True, inline="always")
def _position_features(st, players, target, out):
    """The features of each position in turn order from the first to act (``POSITION_FEATURES``,
    4 each) into ``out``: kings held, cards fitting ``target`` (a side top, or a corner), cards
    that fit on another card of the hand, and the mean rank."""
    npf = 4
    cards = np.empty(64, dtype=np.int64)
    first = st[FIRST]
    for j in range(players):
        seat = (first + j) % players
        n = _hand_cards(st, seat, cards)
        kings = 0
        fit = 0
        chain = 0
        rank = 0
        for i in range(n):
            c = cards[i]
            rank += RANK[c]
            if RANK[c] == KING:
                kings += 1
            if (target >> c) & 1:
                fit += 1
            for i2 in range(n):
                if (FITS_ON[cards[i2]] >> c) & 1:
                    chain += 1
        out[npf * j + 0] = kings
        out[npf * j + 1] = fit
        out[npf * j + 2] = chain
        out[npf * j + 3] = rank / n if n > 0 else 0.0


@nb.njit(cache=True, inline="always")
def _table_features(st, players, corner_empty, side_fit, out, b):
    """The table's features (``TABLE_FEATURES``) into ``out[b:]``: layout kings and aces, side
    piles that could move, the sides' mean top rank, kings in the stock and among the next
    ``players`` cards, and those next cards that fit a side top (``side_fit``)."""
    layout_kings = 0
    layout_aces = 0
    merges = 0
    rank = 0.0
    n_sides = 0
    for p in range(N_PILES):
        base = st[PILE_BASE + p]
        if base >= 0 and RANK[base] == KING:
            layout_kings += 1
    for s in range(N_SIDES):
        base = st[PILE_BASE + s]
        top = st[PILE_TOP + s]
        if top < 0:
            continue
        n_sides += 1
        rank += RANK[top]
        if RANK[top] == 1:
            layout_aces += 1
        movable = RANK[base] == KING and corner_empty
        for p in range(N_PILES):
            t = st[PILE_TOP + p]
            if p != s and t >= 0 and (FITS_ON[t] >> base) & 1:
                movable = True
        if movable:
            merges += 1
    stock_kings = 0
    soon_kings = 0
    soon_fit = 0
    pos = st[STOCK_POS]
    for i in range(pos, st[STOCK_LEN]):
        c = st[STOCK + i]
        if RANK[c] == KING:
            stock_kings += 1
            if i < pos + players:
                soon_kings += 1
        if i < pos + players and (side_fit >> c) & 1:
            soon_fit += 1
    out[b + 0] = layout_kings
    out[b + 1] = layout_aces
    out[b + 2] = merges
    out[b + 3] = rank / n_sides if n_sides > 0 else 0.0
    out[b + 4] = stock_kings
    out[b + 5] = soon_kings
    out[b + 6] = soon_fit


@nb.njit(cache=True)
def _deal_features(seeds, dealers, players, rules, out):
    st = np.zeros(STATE_SIZE, dtype=np.int64)
    for i in range(seeds.shape[0]):
        shuffle_stock(st, seeds[i], rules[R_DECKS])
        deal_stock(st, players, dealers[i], rules)
        features_of_state(st, players, out[i])


def deal_features(seeds, dealers, players: int, rules) -> np.ndarray:
    """(n, F) float64 features of the deals ``seeds`` (int64, one per deal) with dealer
    seats ``dealers`` for ``players`` seats under ``rules`` (a RuleSet or its code array);
    columns as :func:`feature_names`."""
    codes = rules.codes() if hasattr(rules, "codes") else np.asarray(rules, dtype=np.int64)
    seeds = np.ascontiguousarray(seeds, dtype=np.int64).reshape(-1)
    dealers = np.ascontiguousarray(np.broadcast_to(np.asarray(dealers, dtype=np.int64), seeds.shape))
    out = np.zeros((len(seeds), n_features(players)), dtype=np.float64)
    if len(seeds):
        _deal_features(seeds, dealers, np.int64(players), np.ascontiguousarray(codes, dtype=np.int64), out)
    return out


@nb.njit(cache=True)
def _moments(seed, start, stop, players, rules, sx, sxx):
    """Sums of the features and of their outer products over deals start..stop-1 of the
    expectation stream of ``seed`` (dealer 0: features are by turn position, so the
    dealer's seat does not change their distribution)."""
    st = np.zeros(STATE_SIZE, dtype=np.int64)
    x = np.zeros(sx.shape[0], dtype=np.float64)
    base = derive(seed, EXPECTATION_STREAM)
    for i in range(start, stop):
        shuffle_stock(st, derive(base, i), rules[R_DECKS])
        deal_stock(st, players, 0, rules)
        features_of_state(st, players, x)
        for a in range(x.shape[0]):
            sx[a] += x[a]
            for b in range(x.shape[0]):
                sxx[a, b] += x[a] * x[b]


def expected_features(players: int, rules, deals: int = 1_000_000, seed: int = 0):
    """Monte Carlo expectation of the features: ``(mean (F,), covariance of that mean (F, F))``
    from ``deals`` deals dealt (never played) on a stream of their own, independent of any
    run's deals. The covariance (feature covariance / deals) is the error a control-variate
    estimate must carry for using an estimated rather than exact expectation."""
    codes = rules.codes() if hasattr(rules, "codes") else np.asarray(rules, dtype=np.int64)
    F = n_features(players)
    sx = np.zeros(F)
    sxx = np.zeros((F, F))
    _moments(np.int64(seed), np.int64(0), np.int64(deals), np.int64(players),
             np.ascontiguousarray(codes, dtype=np.int64), sx, sxx)
    mean = sx / deals
    cov = (sxx - deals * np.outer(mean, mean)) / max(deals - 1, 1)
    return mean, cov / deals
