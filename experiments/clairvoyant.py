"""A bound on what any sampling search can gain over ``sampler``: the sampler's own search
given the true cards (issue 36).

``sampler`` guesses the hidden cards (the opponents' hands, the stock's order) by sampling
worlds. A *clairvoyant* sampler skips the guess: it plays each candidate line in the one true
world (the real hands and the real stock order) and rolls it out exactly as the sampler does.
It breaks the rule every agent keeps (it reads hidden cards, so ``check_agent`` rejects it);
it is a yardstick, never an opponent for people. Whatever better sampling of the hidden cards
a search may learn (a model of the hands, more worlds), it cannot know more than the true
cards: how far the clairvoyant is ahead of ``sampler`` bounds, roughly, what better world
sampling alone can buy with the same candidates and rollouts. Better candidates or rollouts
(a network's) can go further; a deep clairvoyant (rollouts to the end of the round by the
planner) measures how much of the gap is the rollout's; ``deep_sampler_policy`` is the same
deep rollout with the sampler's own (rule-abiding) sampled worlds.

Use::

    kc-sim bench-agent experiments/clairvoyant.py:clairvoyant_policy --baselines sampler --rounds 40000 --seed 7
    kc-sim bench-agent experiments/clairvoyant.py:clairvoyant_deep_policy --baselines sampler --rounds 10000 --seed 7
    kc-sim bench-agent experiments/clairvoyant.py:deep_sampler_policy --baselines sampler --rounds 4000 --seed 7

The figures are in results/README.md, section 9c.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from agents.plans import MAX_PLAN, PLAN0, next_planned, store_plan
from agents.sampler import K_PLANS, ROLLOUT_DECISIONS, SEARCH_NODES, WIN_WEIGHT, copy_live, rollout, sampler_act
from agents.search import DEFAULT_WEIGHTS, TABLE_SIZE, WS_SIZE, search
from kc_sim.core.layout import DONE, PLAYERS, STATE_SIZE, STOP
from kc_sim.core.legal import has_play, stop_legal
from kc_sim.core.policy import MEM_SIZE, compiled_policy
from kc_sim.core.step import apply

@nb.njit(cache=True)
def clairvoyant_act(st, seat, mem, horizon, nodes):
    """The sampler's decision (its candidates, its objective) with the true world in place of
    the sampled ones: each candidate is played on a copy of ``st`` and rolled out once."""
    a = next_planned(mem, st)
    if a >= 0:
        return a
    if not has_play(st):
        store_plan(mem, st, mem[PLAN0:], 0, 0)
        return STOP
    k_max = K_PLANS + 2
    plans = np.zeros((k_max, MAX_PLAN + 1), np.int64)
    lens = np.zeros(k_max, np.int64)
    scores = np.zeros(k_max, np.int64)
    ws = np.empty(WS_SIZE, np.int64)
    ws[:TABLE_SIZE] = 0
    k, _ = search(st, seat, DEFAULT_WEIGHTS, SEARCH_NODES, K_PLANS, plans, lens, scores, True, True, ws)
    if k > 0 and scores[0] == 0:
        return _play(mem, st, plans[0], lens[0])
    if not (lens[:k] == 0).any() and (k == 0 or stop_legal(st)):
        lens[k] = 0
        k += 1
    if k == 1:
        return _play(mem, st, plans[0], lens[0])
    w = np.empty(STATE_SIZE, np.int64)
    pmem = np.zeros((st[PLAYERS], MEM_SIZE), np.int64)
    r = k_max - 1
    best, best_v = 0, np.inf
    for i in range(k):
        copy_live(w, st)
        for j in range(lens[i]):
            apply(w, plans[i, j])
        if not w[DONE]:
            apply(w, STOP)
        v = rollout(w, seat, pmem, horizon, nodes, WIN_WEIGHT, True, ws, plans[r:], lens[r:], scores[r:])
        if v < best_v:
            best, best_v = i, v
    return _play(mem, st, plans[best], lens[best])

@nb.njit(cache=True)
def _play(mem, st, plan, n):
    store_plan(mem, st, plan, n, 1 if n >= MAX_PLAN else 0)
    if n == 0:
        return STOP
    return plan[0]

@compiled_policy
def clairvoyant_policy(st, seat, mem):
    """The sampler's search in the true world: greedy rollouts of 4 turns."""
    return clairvoyant_act(st, seat, mem, 4, 0)

@compiled_policy
def clairvoyant_deep_policy(st, seat, mem):
    """The sampler's search in the true world: planner rollouts (40 nodes) to the round's end."""
    return clairvoyant_act(st, seat, mem, ROLLOUT_DECISIONS, 40)

@compiled_policy
def deep_sampler_policy(st, seat, mem):
    """``sampler`` (16 sampled worlds, its rule-abiding guess) with planner rollouts (40 nodes)
    to the round's end: what the deep rollout buys without the true cards."""
    return sampler_act(st, seat, mem, 16, ROLLOUT_DECISIONS, 40)

