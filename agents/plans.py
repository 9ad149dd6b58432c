"""A plan for the turn kept in a compiled policy's memory, shared by ``planner`` and ``sampler``:
each searches once at the start of its turn (:mod:`agents.search`), keeps the best action
sequence in its memory (:func:`store_plan`) and plays it out one decision at a time
(:func:`next_planned`), planning again only when the turn is not the one planned for or the
plan no longer applies."""

from __future__ import annotations

from kc_sim.core.kernel import kernel
from kc_sim.core.layout import IDLE, PLAYERS, STOCK_LEN, STOCK_POS, STOP, TURN_ACTIONS, TURNS
from kc_sim.core.legal import is_legal

__all__ = ["MAX_PLAN", "M_CAPPED", "M_LEN", "M_T0", "M_TURN", "PLAN0", "next_planned", "store_plan", "would_block"]

#: longest action sequence a plan may hold (mem slots PLAN0..PLAN0+MAX_PLAN-1)
MAX_PLAN = 56
# policy memory layout shared by planner and sampler (mem[0] is the seat's generator)
M_TURN = 1          # st[TURNS] the plan was made for
M_T0 = 2            # st[TURN_ACTIONS] when it was made
M_LEN = 3           # number of actions in the plan
M_CAPPED = 4        # 1 when the search hit its depth cap: re-plan after the plan
PLAN0 = 8           # mem[PLAN0 + i]: i-th action of the plan


@kernel
def would_block(st):
    """True when an idle turn now would end the round blocked: the stock is empty and every
    other player's last turn was idle."""
    return st[STOCK_LEN] <= st[STOCK_POS] and st[IDLE] >= st[PLAYERS] - 1


@kernel
def store_plan(mem, st, plan, n, capped):
    """Keep a plan for this turn in the policy memory."""
    mem[M_TURN] = st[TURNS]
    mem[M_T0] = st[TURN_ACTIONS]
    mem[M_LEN] = n
    mem[M_CAPPED] = capped
    for i in range(n):
        mem[PLAN0 + i] = plan[i]


@kernel
def next_planned(mem, st):
    """The next action of the plan kept for this turn: an action id, STOP when the
    plan is done, or -1 when there is no valid plan (make one)."""
    if mem[M_TURN] != st[TURNS]:
        return -1
    i = st[TURN_ACTIONS] - mem[M_T0]
    if i < 0 or i > mem[M_LEN]:
        return -1
    if i == mem[M_LEN]:
        if mem[M_CAPPED]:
            return -1
        return STOP
    a = mem[PLAN0 + i]
    if not is_legal(st, a):
        return -1
    return a
