"""The ``search-net`` agent (compiled): the sampler's search with the shipped network inside.

A decision is the sampler's (:mod:`agents.sampler`): the planner's best lines for the turn
plus "stop" are the candidates, each played in the same ``budget`` worlds sampled from the
cards the seat has not seen; the candidate with the best mean objective is played. What
changes is the rollout policy: instead of the sampler's greedy play, the shipped network
(:mod:`agents.net`) plays every seat, for the sampler's :data:`~agents.sampler.HORIZON`
turns (to the round's end once the stock is empty), and the sampler's objective scores where
it stops. Rollouts to the round's end were measured weaker and four times slower (on the
same 4,000 rounds against ``sampler``: a decided share of 51.0% and a penalty difference of
-0.02, against 52.4% and -0.56 with the horizon; results/README.md, §9d): a
world guessed from what the seat saw is rolled out wrong for longer, and the end's win or
loss is noisier than the hands after four turns.

Measured (results/README.md, "Search with the network inside"): better than ``sampler`` and
much better than ``net`` alone, at a fraction of the sampler's speed (a rollout to the end
evaluates the network at every decision of the round).

Names: ``search-net`` samples :data:`DEFAULT_BUDGET` worlds per decision; ``search-net:N``
(or ``search-net-N``) samples N (1 to :data:`MAX_BUDGET`). Random only from ``mem[0]``:
deterministic. It reads only what its seat may see (the worlds are dealt from the unseen
cards).
"""

from __future__ import annotations

from functools import lru_cache

import numba as nb
import numpy as np

from agents.net import shipped_slot
from agents.plans import PLAN0
from agents.sampler import (
    HORIZON,
    ROLLOUT_DECISIONS,
    WIN_WEIGHT,
    decision_buffers,
    enter_world,
    open_decision,
    play_best,
    rollout_value,
    world_setup,
)
from kc_sim.core.layout import DONE, PLAYERS, SEAT, STOCK_LEN, STOCK_POS, STOP
from kc_sim.core.policy import POLICY_SIG, compiling
from kc_sim.core.step import apply
from kc_sim.core.worlds import deal_world
from kc_sim.net.features import WS_SIZE as NET_WS
from kc_sim.net.policy import net_act, slot_params
from kc_sim.play.agents.interface import AgentOption, AgentSpec

#: worlds sampled per decision by ``search-net``
DEFAULT_BUDGET = 16
#: most worlds a ``search-net:N`` name may ask for
MAX_BUDGET = 1024


@nb.njit(cache=True)
def net_rollout(w, seat, params, nws, horizon):
    """Play world ``w`` on with the network (weights ``params``) for every seat, each with its
    own features' workspace (a row of ``nws``, zeroed here), for at most ``horizon`` turn
    changes or to the round's end; returns the sampler's objective for ``seat``
    (:func:`agents.sampler.rollout_value`, lower is better)."""
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
    return rollout_value(w, seat, WIN_WEIGHT, True)


@nb.njit(cache=True)
def search_net_act(st, seat, mem, params, budget, horizon=HORIZON):
    """The decision: the sampler's candidates and worlds, network rollouts of ``horizon``
    turns (to the round's end once the stock is empty)."""
    plans, lens, scores, ws = decision_buffers()
    a, k = open_decision(st, seat, mem, plans, lens, scores, ws)
    if a >= 0:
        return a
    total = np.zeros(k, np.float64)
    cards, n, vis, world, w, ends = world_setup(st, seat, plans, lens, k)
    if n < 0:                             # cannot happen: every card is somewhere
        return play_best(mem, st, plans, lens, total, k)
    nws = np.zeros((st[PLAYERS], NET_WS), np.int64)
    if st[STOCK_POS] >= st[STOCK_LEN]:
        horizon = ROLLOUT_DECISIONS
    for _ in range(budget):
        deal_world(vis, st, seat, cards, n, mem, world)
        for i in range(k):
            enter_world(w, ends, i, world, st, seat, plans, lens)
            total[i] += net_rollout(w, seat, params, nws, horizon)
    return play_best(mem, st, plans, lens, total, k)


@lru_cache(maxsize=None)
def search_net_policy(budget: int):
    """The compiled policy with ``budget`` worlds per decision, playing the shipped network's
    weights from their slot (compiled, or loaded from numba's cache, on first use)."""
    slot, _ = shipped_slot()
    budget = int(budget)

    def search_net_slot_policy(st, seat, mem):
        return search_net_act(st, seat, mem, slot_params(slot), budget)

    search_net_slot_policy.__doc__ = f"``search-net`` with {budget} worlds per decision, weights in slot {slot}."
    with compiling():
        return nb.njit(POLICY_SIG, cache=True)(search_net_slot_policy)


def _with_budget(budget: int) -> AgentSpec:
    """``search-net:N``: N worlds per decision, named ``search-net-N``."""
    name = "search-net" if budget == DEFAULT_BUDGET else f"search-net-{budget}"
    return AgentSpec(name, f"search-net with {budget} sampled worlds per decision",
                     policy=search_net_policy(budget), source=name, mem_words=PLAN0)


#: the registered agent (entry point ``search-net``; ``search-net:N`` picks the worlds)
SPEC = AgentSpec("search-net", f"the sampler's search with the shipped network's rollouts ({HORIZON} turns; "
                 f"{DEFAULT_BUDGET} sampled worlds per decision; search-net:N for N)",
                 policy=search_net_policy(DEFAULT_BUDGET), source="search-net", mem_words=PLAN0,
                 option=AgentOption("worlds sampled per decision", 1, MAX_BUDGET, _with_budget))
