"""The judge's rollouts, in compiled code: a position played to the round's end many times.

Every figure of ``kc-sim analyse`` is a mean over *rollouts*: a world (a full round state,
:mod:`kc_sim.core.worlds`) played to the end of the round by the evaluator's compiled policy
for every seat. Two batch kernels fill arrays of outcomes, one row per world:

* :func:`candidate_batch`: each legal candidate of a decision applied in the same worlds,
  then played out; every candidate sees the same world and the same random numbers for the
  policies in row ``j`` (common random numbers), so their differences are paired.
* :func:`view_batch`: a position with no action of its own (after a draw, or with the
  drawn card put back among the unseen, or a fresh deal): the value of the position to a seat.
  World ``j`` with the drawn card put back is world ``j`` of the position as seen, with the
  drawn card swapped for a card drawn at random among it and the unseen ones: the two differ
  by one card at most, so the luck of a draw (their difference) is measured with little noise.

World ``j`` of a batch is dealt from ``derive(seed, j)`` alone and its policies' generators
are seeded from ``derive(seed ^ POLICY_STREAM, j)``: a world does not depend on the batch it
is in, so batches can be added until the figures are told apart and the result is the same
as one big batch. Outcomes per world: 1.0 if the judged seat won the round (else 0.0), and
its penalty minus the mean penalty of the other seats.
"""

from __future__ import annotations

from functools import lru_cache

import numba as nb
import numpy as np
from numba import types

from kc_sim.core.layout import (
    DEALER,
    DONE,
    HAND_N,
    MAX_SEATS,
    PENALTY,
    PLAYERS,
    RULES,
    SEAT,
    STATE_SIZE,
    STOCK,
    STOCK_POS,
    WINNER,
)
from kc_sim.core.legal import is_legal
from kc_sim.core.policy import MEM_SIZE, POLICY_TYPE, SEAT_STREAM, compiling
from kc_sim.core.rng import below, derive
from kc_sim.core.step import add_to_hand, apply, deal, take_from_hand
from kc_sim.core.worlds import copy_live, deal_world, unseen_cards, visible_copy
from kc_sim.game.variants import N_RULE_CODES

__all__ = ["KNOWN", "PRIOR", "REDRAW", "VIEW", "candidate_batch", "view_batch"]

#: decisions a rollout may take at most (a guard: a round of the core ends long before)
ROLLOUT_DECISIONS = 4000
#: a stream of its own for the policies' generators (worlds use ``derive(seed, j)``)
POLICY_STREAM = 0x6A756467
#: what a world is dealt from: the seat's view (hidden cards resampled), the whole position
#: as it is (every card known: hindsight), the view with the card just drawn put back among
#: the unseen (and drawn again at random), or a fresh deal of the round (the seat's prior)
VIEW, KNOWN, REDRAW, PRIOR = 0, 1, 2, 3
#: a rollout whose evaluator played an illegal action (its outcome is not used)
ILLEGAL = -1.0

I1 = types.int64[::1]
F2 = types.float64[:, ::1]


@nb.njit(cache=True)
def _seed_mem(mem, seed, players):
    for s in range(players):
        mem[s, :] = 0
        mem[s, 0] = derive(seed, SEAT_STREAM + s)


@nb.njit(cache=True)
def _play_out(w, policy, mem):
    """Play ``w`` to its end with ``policy`` for every seat; False if the policy played an
    illegal action (the rollout stops there)."""
    for _ in range(ROLLOUT_DECISIONS):
        if w[DONE]:
            return True
        s = w[SEAT]
        a = policy(w, s, mem[s])
        if not is_legal(w, a):
            return False
        apply(w, a)
    return bool(w[DONE])


@nb.njit(cache=True)
def _outcome(w, seat, row, col, win, pen):
    """Write the judged seat's outcome of a finished rollout into ``win[row, col]`` (1.0 won)
    and ``pen[row, col]`` (its penalty minus the others' mean)."""
    players = w[PLAYERS]
    others = 0.0
    for s in range(players):
        if s != seat:
            others += w[PENALTY + s]
    win[row, col] = 1.0 if w[WINNER] == seat else 0.0
    pen[row, col] = w[PENALTY + seat] - others / (players - 1)


@nb.njit(cache=True)
def _swap_redraw(w, st, seat, card, cards, n, rng):
    """Turn the world ``w`` (dealt by :func:`~kc_sim.core.worlds.deal_world` from the ``n``
    unseen ``cards``, in their dealt order) into one where the seat's last drawn ``card`` is
    one more unseen card: a card drawn uniformly from the ``n`` unseen cards and ``card``
    takes the place of ``card`` in the seat's hand, and ``card`` takes its place (another
    hand or the stock). The result is a uniform deal of the unseen cards and ``card``, and
    differs from ``w`` by one swap at most, so the two worlds' rollouts are closely paired."""
    r = below(rng, 0, n + 1)
    if r == n:                                   # the card it drew
        return
    other = cards[r]
    k = r
    for s in range(st[PLAYERS]):
        if s == seat or k < 0:
            continue
        if k < st[HAND_N + s]:
            take_from_hand(w, s, other)
            add_to_hand(w, s, card)
            k = -1                                # placed
        else:
            k -= st[HAND_N + s]
    if k >= 0:                                    # in the stock
        w[STOCK + st[STOCK_POS] + k] = card
    take_from_hand(w, seat, card)
    add_to_hand(w, seat, other)


def _candidate_batch(st, seat, actions, k, mode, policy, seed, start, count, win, pen):
    cards = np.empty(104, np.int64)
    vis = np.empty(STATE_SIZE, np.int64)
    world = np.empty(STATE_SIZE, np.int64)
    w = np.empty(STATE_SIZE, np.int64)
    mem = np.zeros((MAX_SEATS, MEM_SIZE), np.int64)
    rng = np.zeros(1, np.int64)
    visible_copy(st, seat, vis)
    bad = 0
    for r in range(count):
        j = start + r
        if mode == KNOWN:
            copy_live(world, st)
        else:
            rng[0] = derive(seed, j)
            n = unseen_cards(st, seat, cards)
            deal_world(vis, st, seat, cards, n, rng, world)
        for i in range(k):
            copy_live(w, world)
            apply(w, actions[i])
            _seed_mem(mem, derive(seed ^ POLICY_STREAM, j), w[PLAYERS])
            if _play_out(w, policy, mem):
                _outcome(w, seat, r, i, win, pen)
            else:
                win[r, i] = ILLEGAL
                bad += 1
    return bad


def _view_batch(st, seat, card, mode, policy, seed, start, count, win, pen):
    cards = np.empty(104, np.int64)
    vis = np.empty(STATE_SIZE, np.int64)
    w = np.empty(STATE_SIZE, np.int64)
    mem = np.zeros((MAX_SEATS, MEM_SIZE), np.int64)
    rng = np.zeros(1, np.int64)
    rules = np.empty(N_RULE_CODES, np.int64)
    for i in range(N_RULE_CODES):
        rules[i] = st[RULES + i]
    visible_copy(st, seat, vis)
    bad = 0
    for r in range(count):
        j = start + r
        rng[0] = derive(seed, j)
        if mode == KNOWN:
            copy_live(w, st)
        elif mode == PRIOR:                      # a fresh deal, the same players, dealer and rules
            deal(w, derive(seed, j), st[PLAYERS], st[DEALER], rules)
        elif mode == REDRAW:                     # the view's world j, one card swapped at most
            n = unseen_cards(st, seat, cards)
            deal_world(vis, st, seat, cards, n, rng, w)
            _swap_redraw(w, st, seat, card, cards, n, rng)
        else:
            n = unseen_cards(st, seat, cards)
            deal_world(vis, st, seat, cards, n, rng, w)
        _seed_mem(mem, derive(seed ^ POLICY_STREAM, j), w[PLAYERS])
        if _play_out(w, policy, mem):
            _outcome(w, seat, r, 0, win, pen)
        else:
            win[r, 0] = ILLEGAL
            bad += 1
    return bad


@lru_cache(maxsize=None)
def _compiled(name):
    """The batch kernel ``name`` compiled for its one signature (the policy as a function
    pointer), on first use (or loaded from numba's cache)."""
    entry = {"candidate": _candidate_batch, "view": _view_batch}[name]
    if name == "candidate":
        sig = types.int64(I1, types.int64, I1, types.int64, types.int64, POLICY_TYPE, types.int64, types.int64,
                          types.int64, F2, F2)
    else:
        sig = types.int64(I1, types.int64, types.int64, types.int64, POLICY_TYPE, types.int64, types.int64,
                          types.int64, F2, F2)
    fn = nb.njit(cache=True)(entry)
    with compiling():
        fn.compile(sig)
    fn.disable_compile()
    return fn


def candidate_batch(st, seat, actions, mode, policy, seed, start, count):
    """Worlds ``start`` to ``start + count`` of a decision: ``(win, pen, bad)``, arrays of
    ``count`` rows by ``len(actions)`` candidates (see the module docstring) and the number
    of rollouts in which the policy played an illegal action (their ``win`` is -1)."""
    actions = np.ascontiguousarray(actions, dtype=np.int64)
    k = len(actions)
    win = np.zeros((count, k), np.float64)
    pen = np.zeros((count, k), np.float64)
    bad = _compiled("candidate")(np.ascontiguousarray(st, dtype=np.int64), seat, actions, k, mode, policy,
                                 _i64(seed), start, count, win, pen)
    return win, pen, int(bad)


def view_batch(st, seat, mode, policy, seed, start, count, card=-1):
    """Worlds ``start`` to ``start + count`` of a position's value to ``seat``: ``(win, pen,
    bad)``, one column. ``mode``: :data:`VIEW`, :data:`KNOWN`, :data:`REDRAW` (``card`` is the
    seat's card to put back) or :data:`PRIOR`."""
    win = np.zeros((count, 1), np.float64)
    pen = np.zeros((count, 1), np.float64)
    bad = _compiled("view")(np.ascontiguousarray(st, dtype=np.int64), seat, card, mode, policy, _i64(seed),
                            start, count, win, pen)
    return win[:, 0], pen[:, 0], int(bad)


def _i64(x: int) -> int:
    """``x`` as a signed 64-bit value (seeds are derived from any integer)."""
    x = int(x) & 0xFFFFFFFFFFFFFFFF
    return x - (1 << 64) if x >= 1 << 63 else x

