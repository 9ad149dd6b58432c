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

from agents.sampler import (K_PLANS, ROLLOUT_DECISIONS, WIN_WEIGHT, turn_ends, decision_buffers, enter_world,
                            open_decision, play_best, rollout, sampler_act)
from kc_sim.core.layout import PLAYERS, STATE_SIZE
from kc_sim.core.policy import MEM_SIZE, compiled_policy


@nb.njit(cache=True)
def clairvoyant_act(st, seat, mem, horizon, nodes):
    """The sampler's decision (its candidates, its objective) with the true world in place of
    the sampled ones: each candidate is played in ``st`` itself and rolled out once."""
    plans, lens, scores, ws = decision_buffers()
    a, k = open_decision(st, seat, mem, plans, lens, scores, ws)
    if a >= 0:
        return a
    w = np.empty(STATE_SIZE, np.int64)
    ends = turn_ends(st, plans, lens, k, w)
    pmem = np.zeros((st[PLAYERS], MEM_SIZE), np.int64)
    total = np.zeros(k, np.float64)
    r = K_PLANS + 1
    for i in range(k):
        enter_world(w, ends, i, st, st, seat, plans, lens)
        total[i] = rollout(w, seat, pmem, horizon, nodes, WIN_WEIGHT, True, ws, plans[r:], lens[r:], scores[r:])
    return play_best(mem, st, plans, lens, total, k)


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

