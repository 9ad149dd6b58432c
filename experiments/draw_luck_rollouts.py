"""A prototype of AIVAT's chance-event control variate with a value function estimated by
rollouts, to see what a sharper ``f`` than the four of ``kc_sim.core.draw_luck`` could give
(issue 37 item 5; results/README.md, "Draw control variates").

    python experiments/draw_luck_rollouts.py                         # greedy vs pile-merger, 3,000 deals
    python experiments/draw_luck_rollouts.py --agents greedy,random --deals 2000 --rollouts 2

At each draw (``draw=end``, 2 players) of the stock card at position ``pos`` by seat ``s``, for
every card ``c'`` left in the stock: ``V(c')`` = the mean over ``K`` rollouts, with ``c'`` drawn
now and the rest of the stock shuffled afresh (the rollouts never see the true order), of
``s``'s result at the end of the round played on by the agents' own compiled policies. The
luck term ``V(c) - mean V(c')`` has mean 0 given the past, as the four simple ones do. Per
deal the terms (a's seat minus b's, both seatings) adjust the pair's score and penalty
difference in the cross-fitted regression; printed: the factors, with and without the four
simple sums, and the cost in rounds per second.
"""

from __future__ import annotations

import argparse
import time

import numba as nb
import numpy as np

from kc_sim.core import loop
from kc_sim.core.layout import (DONE, MAX_SEATS, PENALTY, SEAT, STATE_SIZE, STOCK, STOCK_LEN, STOCK_POS,
                                STOP)
from kc_sim.core.policy import MEM_SIZE
from kc_sim.core.policy_set import call_policy, seed_seats
from kc_sim.core.rng import advance, derive, scale
from kc_sim.core.step import apply, deal, first_dealer
from kc_sim.core.views import row_view
from kc_sim.game.rules import parse_rules
from kc_sim.play.agents.registry import load_agents
from kc_sim.play.driver.runner import compiled_loop
from kc_sim.stats.pairs import ahead
from kc_sim.stats.variates import adjusted_arrays


@nb.njit
def _values(st, work, policies, seat_map, mem, wmem, s, j, K, rng):
    """(score, penalty) value for seat s of drawing stock position j now: K rollouts, rest shuffled."""
    pos, n = st[STOCK_POS], st[STOCK_LEN]
    vs, vp = 0.0, 0.0
    for _ in range(K):
        work[:] = st
        wmem[:, :] = mem
        t = work[STOCK + pos]
        work[STOCK + pos] = work[STOCK + j]
        work[STOCK + j] = t
        for i in range(n - 1, pos + 1, -1):
            rng, z = advance(rng)
            k = pos + 1 + scale(z, i - pos)
            t = work[STOCK + i]
            work[STOCK + i] = work[STOCK + k]
            work[STOCK + k] = t
        apply(work, STOP)
        loop.round_loop(work, policies, seat_map, wmem, None, None)
        mine, other = work[PENALTY + s], work[PENALTY + 1 - s]
        vs += 1.0 if mine < other else (0.5 if mine == other else 0.0)
        vp += other - mine
    return vs / K, vp / K, rng


@nb.njit
def play(seeds, rules, policies, K, pens, luck):
    """2-player rounds, one per seed; ``pens`` (R, 2) penalties, ``luck`` (R, 2 seats, 2) the sums."""
    st = np.zeros(STATE_SIZE, dtype=np.int64)
    work = np.zeros(STATE_SIZE, dtype=np.int64)
    mem = np.zeros((MAX_SEATS, MEM_SIZE), dtype=np.int64)
    wmem = np.zeros((MAX_SEATS, MEM_SIZE), dtype=np.int64)
    seat_map = np.arange(MAX_SEATS)
    for i in range(seeds.shape[0]):
        deal(st, seeds[i], 2, first_dealer(seeds[i], 2), rules)
        seed_seats(policies, mem, seeds[i], 2)
        rng = np.uint64(derive(seeds[i], 0x726F6C6C))
        for _ in range(loop.MAX_DECISIONS):
            if st[DONE]:
                break
            seat = st[SEAT]
            a = call_policy(policies, seat, st, seat, row_view(mem, seat))
            if a == STOP and st[STOCK_POS] < st[STOCK_LEN]:
                pos, n = st[STOCK_POS], st[STOCK_LEN]
                ss, sp, ms, mp = 0.0, 0.0, 0.0, 0.0
                for j in range(pos, n):
                    vs, vp, rng = _values(st, work, policies, seat_map, mem, wmem, seat, j, K, rng)
                    ss += vs
                    sp += vp
                    if j == pos:
                        ms, mp = vs, vp
                luck[i, seat, 0] += ms - ss / (n - pos)
                luck[i, seat, 1] += mp - sp / (n - pos)
            apply(st, a)
        pens[i, 0] = st[PENALTY]
        pens[i, 1] = st[PENALTY + 1]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--agents", default="greedy,pile-merger")
    ap.add_argument("--deals", type=int, default=3000)
    ap.add_argument("--rollouts", type=int, default=1, help="rollouts per candidate card (K)")
    ap.add_argument("--seed", type=int, default=7)
    a = ap.parse_args(argv)
    names = a.agents.split(",")
    rules = parse_rules("classic").codes()
    seeds = np.arange(a.deals, dtype=np.int64) + a.seed * 10**9
    res = {}
    t0 = time.process_time()
    for order in (0, 1):
        specs = load_agents(names if order == 0 else names[::-1])
        _, pols = compiled_loop(specs, "rounds", specs)
        pens, luck = np.zeros((a.deals, 2), np.int64), np.zeros((a.deals, 2, 2))
        play(seeds, rules, pols, a.rollouts, pens, luck)
        res[order] = (pens, luck)
    secs = time.process_time() - t0
    (pA, lA), (pB, lB) = res[0], res[1]                # a sits in seat 0 in A, seat 1 in B
    ys = (ahead(pA[:, 0], pA[:, 1]) + ahead(pB[:, 1], pB[:, 0])) / 2
    yp = ((pA[:, 0] - pA[:, 1]) + (pB[:, 1] - pB[:, 0])) / 2.0
    x = ((lA[:, 0] - lA[:, 1]) + (lB[:, 1] - lB[:, 0])) / 2
    print(f"{a.agents}: {a.deals:,} deals, K={a.rollouts}: {2 * a.deals / secs:,.0f} rounds/s with the rollouts")
    for what, y in (("score", ys.astype(float)), ("penalty diff", yp)):
        r = adjusted_arrays(seeds, y, x, np.zeros(2))
        print(f"  {what}: plain {r.mean:+.4f} (se {r.se:.5f}), adjusted {r.adj:+.4f} (se {r.adj_se:.5f}); "
              f"worth {r.factor:.2f}x, cross-fitted R2 {r.r2:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
