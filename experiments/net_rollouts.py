"""Prototype for issue 36: the sampler's search with a trained network as the rollout policy
for every seat (in place of greedy), to measure what network rollouts buy before the agent
gets a home in the package.

The model is named by the environment variable ``KC_NET_MODEL`` (a ``kc-sim train`` model);
``KC_NET_WORLDS`` (default 16) and ``KC_NET_HORIZON`` (default 4; 0: to the round's end) set
the worlds and the rollout length. Use::

    KC_NET_MODEL=model.zip kc-sim bench-agent experiments/net_rollouts.py:net_sampler_policy \\
        --baselines sampler --rounds 4000 --seed 7 -j 1
"""

from __future__ import annotations

import os

import numba as nb
import numpy as np

from agents.plans import MAX_PLAN, PLAN0, next_planned, store_plan
from agents.sampler import (K_PLANS, ROLLOUT_DECISIONS, SEARCH_NODES, WIN_WEIGHT, _turn_ends, copy_live, deal_world,
                            unseen_cards, visible_copy)
from agents.search import DEFAULT_WEIGHTS, TABLE_SIZE, WS_SIZE, search
from kc_sim.core.layout import DONE, HAND, HAND_N, PLAYERS, SEAT, STATE_SIZE, STOCK, STOCK_LEN, STOCK_POS, STOP, WINNER
from kc_sim.core.legal import has_play, stop_legal
from kc_sim.core.policy import POLICY_SIG
from kc_sim.core.step import apply, hand_penalty
from kc_sim.env.obs_actions import WS_SIZE as NET_WS
from kc_sim.learn.net_model import read_net
from kc_sim.learn.net_policy import net_act

PARAMS = read_net(os.environ["KC_NET_MODEL"]).params
WORLDS = int(os.environ.get("KC_NET_WORLDS", "16"))
HORIZON = int(os.environ.get("KC_NET_HORIZON", "4")) or ROLLOUT_DECISIONS


@nb.njit
def net_rollout(w, seat, params, nws, horizon, win_w):
    """The sampler's rollout objective with the network playing every seat."""
    nws[:, :] = 0
    turns = 0
    for _ in range(ROLLOUT_DECISIONS):
        if w[DONE] or turns >= horizon:
            break
        s = w[SEAT]
        a = net_act(w, s, params, nws[s])
        apply(w, a)
        if a == STOP:
            turns += 1
    players = w[PLAYERS]
    mine = hand_penalty(w, seat)
    others = 0
    for s in range(players):
        if s != seat:
            others += hand_penalty(w, s)
    v = float(mine) - others / (players - 1)
    if w[DONE]:
        v += -win_w if w[WINNER] == seat else win_w
    return v


@nb.njit
def net_sampler_act(st, seat, mem, params, budget, horizon):
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
    cards = np.empty(104, np.int64)
    n = unseen_cards(st, seat, cards)
    vis = np.empty(STATE_SIZE, np.int64)
    visible_copy(st, seat, vis)
    world = np.empty(STATE_SIZE, np.int64)
    w = np.empty(STATE_SIZE, np.int64)
    ends = _turn_ends(vis, plans, lens, k, w)
    nws = np.zeros((st[PLAYERS], NET_WS), np.int64)
    total = np.zeros(k, np.float64)
    if st[STOCK_LEN] <= st[STOCK_POS]:
        horizon = ROLLOUT_DECISIONS
    for _ in range(budget):
        deal_world(vis, st, seat, cards, n, mem, world)
        for i in range(k):
            if ends[i, DONE]:
                copy_live(w, world)
                for j in range(lens[i]):
                    apply(w, plans[i, j])
            else:
                for j in range(STOCK):
                    w[j] = ends[i, j]
                for s in range(st[PLAYERS]):
                    if s != seat:
                        w[HAND + 2 * s] = world[HAND + 2 * s]
                        w[HAND + 2 * s + 1] = world[HAND + 2 * s + 1]
                        w[HAND_N + s] = world[HAND_N + s]
                for j in range(STOCK + world[STOCK_POS], STOCK + world[STOCK_LEN]):
                    w[j] = world[j]
            if not w[DONE]:
                apply(w, STOP)
            total[i] += net_rollout(w, seat, params, nws, horizon, WIN_WEIGHT)
    best = 0
    for i in range(1, k):
        if total[i] < total[best]:
            best = i
    return _play(mem, st, plans[best], lens[best])


@nb.njit
def _play(mem, st, plan, n):
    store_plan(mem, st, plan, n, 1 if n >= MAX_PLAN else 0)
    if n == 0:
        return STOP
    return plan[0]


@nb.njit(POLICY_SIG)
def net_sampler_policy(st, seat, mem):
    return net_sampler_act(st, seat, mem, PARAMS, WORLDS, HORIZON)
