"""Worlds: the round as one seat may know it, with the cards it cannot see dealt at random.

A seat of Kings in the Corner sees its own hand, every pile, how many cards each other seat
holds and how many are left in the stock; every other card (the other hands, the stock's
order) is hidden. Any search or judgement "from what the seat knew" therefore works on
*worlds*: the visible part of the round with the unseen cards shuffled and dealt back into the
other hands (at their known sizes) and the stock (at its known size). Such a world is a full
round state the compiled core can play on.

These functions are pure functions over flat ``int64`` round states (``kc_sim.core.layout``)
and card arrays, compiled with numba; the sampler and search-net agents (``agents/``) and the
judge (``kc_sim.judge``) build their worlds with them, so every user samples the hidden cards
the same way (they moved here from ``agents/sampler.py`` in issue 37, unchanged).
"""

import numba as nb
import numpy as np

from kc_sim.core.bits import lowest
from kc_sim.core.kernel import kernel
from kc_sim.core.layout import (
    HAND,
    HAND_N,
    N_PILES,
    PILE_BASE,
    PILE_MASK,
    PILE_SIZE,
    PILE_TOP,
    PLAYERS,
    RULES,
    STOCK,
    STOCK_LEN,
    STOCK_POS,
)
from kc_sim.core.rng import below
from kc_sim.core.step import add_to_hand
from kc_sim.game.cards import ALL_MASK, N_CARDS
from kc_sim.game.variants import R_DECKS

__all__ = ["copy_live", "deal_world", "unseen_cards", "unseen_mask", "visible_copy"]


@nb.njit(cache=True)
def unseen_mask(st, seat):
    """Cards the seat has not seen: neither in its hand nor anywhere on the table (with two
    decks: cards of which some copy is still unaccounted for). What a seat may assume about
    any one hidden card: it is one of these."""
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


@kernel
def unseen_cards(st, seat, out):
    """Write the cards the seat has not seen (with multiplicity for two decks, ascending
    card id) into ``out``; returns their number. The pool a world's hidden cards are dealt
    from: as a list (not a mask) so that a shuffle can deal it, and with both copies of a
    card under two decks."""
    n = 0
    if st[RULES + R_DECKS] == 1:
        m = unseen_mask(st, seat)
        while m:
            out[n] = lowest(m)
            n += 1
            m &= m - 1
        return n
    h0 = st[HAND + 2 * seat]
    h1 = st[HAND + 2 * seat + 1]
    for c in range(N_CARDS):
        seen = ((h0 >> c) & 1) + ((h1 >> c) & 1)
        for p in range(N_PILES):
            seen += (st[PILE_MASK + p] >> c) & 1
        for _ in range(2 - seen):
            out[n] = c
            n += 1
    return n


@kernel
def visible_copy(st, seat, w):
    """Copy into ``w`` what the seat may see: the header, its hand, hand sizes and the
    piles. Other hands and the stock are left empty (zero). A world starts from this copy,
    so nothing hidden from the seat can leak into it."""
    w[:] = 0
    for i in range(HAND):
        w[i] = st[i]
    w[HAND + 2 * seat] = st[HAND + 2 * seat]
    w[HAND + 2 * seat + 1] = st[HAND + 2 * seat + 1]
    w[HAND_N + seat] = st[HAND_N + seat]
    for p in range(N_PILES):
        w[PILE_MASK + p] = st[PILE_MASK + p]
        w[PILE_BASE + p] = st[PILE_BASE + p]
        w[PILE_TOP + p] = st[PILE_TOP + p]
        w[PILE_SIZE + p] = st[PILE_SIZE + p]


@nb.njit(cache=True, inline="always")
def copy_live(dst, src):
    """Copy the words of ``src`` a round's play can still read into ``dst``: everything up to
    the stock, and the stock cards not yet drawn (``dst``'s other stock words are left as
    they are: drawn cards are never read again). Cheaper than a whole copy when a world is
    played many times from one position."""
    for i in range(STOCK):
        dst[i] = src[i]
    for i in range(STOCK + src[STOCK_POS], STOCK + src[STOCK_LEN]):
        dst[i] = src[i]


@kernel
def deal_world(vis, st, seat, cards, n, rng, w):
    """A world: ``vis`` (the visible copy) with the ``n`` unseen ``cards`` shuffled by the
    generator ``rng[0]`` and dealt to the other seats (their known hand sizes, in seat
    order) and to the stock (its known size). Reads only hand sizes and the stock size
    from ``st``. ``cards`` is shuffled in place (each world reshuffles the previous order:
    every world is a uniform deal of the unseen cards, and the sequence of worlds depends
    only on ``rng[0]``)."""
    for i in range(n - 1, 0, -1):
        j = below(rng, 0, i + 1)
        t = cards[i]
        cards[i] = cards[j]
        cards[j] = t
    for i in range(STOCK):
        w[i] = vis[i]
    k = 0
    for s in range(st[PLAYERS]):
        if s == seat:
            continue
        for _ in range(st[HAND_N + s]):
            add_to_hand(w, s, cards[k])
            k += 1
    pos = st[STOCK_POS]
    for i in range(pos, st[STOCK_LEN]):
        w[STOCK + i] = cards[k]
        k += 1
