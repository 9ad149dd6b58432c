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

from agents.sampler import (ROLLOUT_DECISIONS, WIN_WEIGHT, decision_buffers, enter_world, open_decision,
                            play_best, rollout_value, world_setup)
from kc_sim.core.layout import DONE, PLAYERS, SEAT, STOCK_LEN, STOCK_POS, STOP
from kc_sim.core.policy import POLICY_SIG
from kc_sim.core.step import apply
from kc_sim.core.worlds import deal_world
from kc_sim.net.features import WS_SIZE as NET_WS
from kc_sim.net.model import read_net
from kc_sim.net.policy import net_act

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
    return rollout_value(w, seat, win_w, True)


@nb.njit
def net_sampler_act(st, seat, mem, params, budget, horizon):
    """The sampler's decision with the network's rollouts."""
    plans, lens, scores, ws = decision_buffers()
    a, k = open_decision(st, seat, mem, plans, lens, scores, ws)
    if a >= 0:
        return a
    cards, n, vis, world, w, ends = world_setup(st, seat, plans, lens, k)
    nws = np.zeros((st[PLAYERS], NET_WS), np.int64)
    total = np.zeros(k, np.float64)
    if st[STOCK_LEN] <= st[STOCK_POS]:
        horizon = ROLLOUT_DECISIONS
    for _ in range(budget):
        deal_world(vis, st, seat, cards, n, mem, world)
        for i in range(k):
            enter_world(w, ends, i, world, st, seat, plans, lens)
            total[i] += net_rollout(w, seat, params, nws, horizon, WIN_WEIGHT)
    return play_best(mem, st, plans, lens, total, k)


@nb.njit(POLICY_SIG)
def net_sampler_policy(st, seat, mem):
    return net_sampler_act(st, seat, mem, PARAMS, WORLDS, HORIZON)
