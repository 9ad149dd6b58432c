"""Prototype for issue 36: the sampler with worlds that respect what the previous player's
stop says about its hand.

Every built-in player places a card whenever one fits (a stop with a fitting card is rare),
so when the previous seat ended its turn, the cards of its hand then fitted no target; the
targets have not changed since (the draw moves no pile). Its hand now is those cards plus,
perhaps, the one it drew. The prototype deals that seat ``n - 1`` cards from the unseen
cards that fit no target now and one from all the unseen cards (then the other hands and the
stock from the rest), falling back to the sampler's uniform deal when too few unseen cards
fit nothing (it held a fitting card). One deck only; two decks deal uniformly.

    kc-sim bench-agent experiments/inferred_worlds.py:inferred_sampler_policy --baselines sampler --rounds 4000
"""

from __future__ import annotations

import os

import numba as nb
import numpy as np

from agents.position import unseen_mask
from agents.sampler import (K_PLANS, ROLLOUT_DECISIONS, WIN_WEIGHT, decision_buffers, enter_world, open_decision,
                            play_best, rollout, world_setup)
from kc_sim.core.bits import lowest
from kc_sim.core.layout import (DONE, HAND, HAND_N, N_PILES, PLAYERS, RULES, SEAT, STATE_SIZE, STOCK, STOCK_LEN,
                                STOCK_POS, STOP)
from kc_sim.core.legal import target_mask
from kc_sim.core.policy import MEM_SIZE, POLICY_SIG
from kc_sim.core.rng import below
from kc_sim.core.step import add_to_hand, apply, deal
from kc_sim.game.variants import R_DECKS

WORLDS = int(os.environ.get("KC_WORLDS", "16"))
HORIZON = int(os.environ.get("KC_HORIZON", "4")) or ROLLOUT_DECISIONS
NODES = int(os.environ.get("KC_NODES", "0"))
FREE = int(os.environ.get("KC_FREE", "1"))       # cards of the previous seat's hand left unconstrained


@nb.njit
def _mask_cards(m, out):
    n = 0
    while m:
        out[n] = lowest(m)
        n += 1
        m &= m - 1
    return n


@nb.njit
def _shuffle(a, n, rng):
    for i in range(n - 1, 0, -1):
        j = below(rng, 0, i + 1)
        t = a[i]
        a[i] = a[j]
        a[j] = t


@nb.njit
def deal_inferred(vis, st, seat, rng, w, fit, free):
    """A world: the previous seat gets (its hand size - free) cards from the unseen ones that
    fit no target, the rest uniformly. Returns False when the constraint cannot hold."""
    players = st[PLAYERS]
    prev = (seat - 1 + players) % players
    unseen = unseen_mask(st, seat)
    nofit = unseen & ~fit
    a = np.empty(64, np.int64)
    n_prev = st[HAND_N + prev]
    need = max(n_prev - free, 0)
    na = _mask_cards(nofit, a)
    if na < need:
        return False
    _shuffle(a, na, rng)
    for i in range(STOCK):
        w[i] = vis[i]
    taken = np.int64(0)
    for i in range(need):
        add_to_hand(w, prev, a[i])
        taken |= np.int64(1) << a[i]
    b = np.empty(64, np.int64)
    nb_ = _mask_cards(unseen & ~taken, b)
    _shuffle(b, nb_, rng)
    k = 0
    for _ in range(n_prev - need):
        add_to_hand(w, prev, b[k])
        k += 1
    for s in range(players):
        if s == seat or s == prev:
            continue
        for _ in range(st[HAND_N + s]):
            add_to_hand(w, s, b[k])
            k += 1
    for i in range(st[STOCK_POS], st[STOCK_LEN]):
        w[STOCK + i] = b[k]
        k += 1
    return True


@nb.njit
def deal_uniform(vis, st, seat, rng, w):
    return deal_inferred(vis, st, seat, rng, w, np.int64(0), 1 << 20)


@nb.njit
def inferred_act(st, seat, mem, budget, horizon, nodes, free):
    """The sampler's decision in worlds dealt by :func:`deal_inferred` (one deck; the planner's
    best line with two)."""
    plans, lens, scores, ws = decision_buffers()
    a, k = open_decision(st, seat, mem, plans, lens, scores, ws)
    if a >= 0:
        return a
    total = np.zeros(k, np.float64)
    if st[RULES + R_DECKS] != 1:
        return play_best(mem, st, plans, lens, total, 1)
    fit = np.int64(0)
    for p in range(N_PILES):
        fit |= target_mask(st, p)
    _, _, vis, world, w, ends = world_setup(st, seat, plans, lens, k)
    pmem = np.zeros((st[PLAYERS], MEM_SIZE), np.int64)
    if st[STOCK_LEN] <= st[STOCK_POS]:
        horizon = ROLLOUT_DECISIONS
    r = K_PLANS + 1
    for _ in range(budget):
        if not deal_inferred(vis, st, seat, mem, world, fit, free):
            deal_uniform(vis, st, seat, mem, world)
        for i in range(k):
            enter_world(w, ends, i, world, st, seat, plans, lens)
            total[i] += rollout(w, seat, pmem, horizon, nodes, WIN_WEIGHT, True, ws, plans[r:], lens[r:], scores[r:])
    return play_best(mem, st, plans, lens, total, k)


@nb.njit(POLICY_SIG)
def inferred_sampler_policy(st, seat, mem):
    return inferred_act(st, seat, mem, WORLDS, HORIZON, NODES, FREE)


@nb.njit
def _holding_stops(policy, rounds, rules):
    """Self-play of ``policy`` at 2 seats: (stops, stops with a hand card that fits a target)."""
    st = np.zeros(STATE_SIZE, np.int64)
    mem = np.zeros((2, MEM_SIZE), np.int64)
    stops = holds = 0
    for r in range(rounds):
        deal(st, r * 7919 + 1, 2, r % 2, rules)
        mem[:, :] = 0
        mem[0, 0], mem[1, 0] = 2 * r + 11, 2 * r + 12
        for _ in range(ROLLOUT_DECISIONS):
            if st[DONE]:
                break
            s = st[SEAT]
            a = policy(st, s, mem[s])
            if a == STOP:
                fit = np.int64(0)
                for p in range(N_PILES):
                    fit |= target_mask(st, p)
                stops += 1
                holds += (st[HAND + 2 * s] & fit) != 0
            apply(st, a)
    return stops, holds


def main(rounds: int = 500) -> None:
    """How often each built-in player stops while a card of its hand fits a target (the
    assumption behind these worlds), in 2-player classic self-play."""
    from agents.greedy import greedy_policy
    from agents.planner import planner_policy
    from agents.sampler import sampler_policy
    from kc_sim.game.rules import parse_rules

    rules = parse_rules("classic").codes()
    for name, policy in (("greedy", greedy_policy), ("planner", planner_policy), ("sampler", sampler_policy)):
        stops, holds = _holding_stops(policy, rounds, rules)
        print(f"{name}: {holds:,} of {stops:,} stops ({100 * holds / stops:.1f}%) hold a card that fits a target")


if __name__ == "__main__":
    main()
