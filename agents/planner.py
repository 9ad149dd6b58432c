"""The ``planner`` agent (compiled): searches its whole turn, then plays the best line.

See :mod:`agents.search` and docs/agents.md (Stronger agents) for the search and its evaluation.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from agents.plans import MAX_PLAN, PLAN0, next_planned, store_plan, would_block
from agents.search import (
    DEFAULT_WEIGHTS,
    MAX_NODES,
    TABLE_SIZE,
    WS_SIZE,
    search,
)
from kc_sim.core.kernel import kernel
from kc_sim.core.layout import STOP
from kc_sim.core.legal import has_play
from kc_sim.core.policy import compiled_policy
from kc_sim.play.agents.interface import AgentSpec

_W = DEFAULT_WEIGHTS


@kernel
def plan_turn_in(st, seat, mem, w, max_nodes, avoid_block, ws, plans, lens, scores):
    """:func:`plan_turn` in a search workspace (``agents.search.new_workspace``) with
    ``plans`` (at least 1 x MAX_PLAN + 1), ``lens`` and ``scores`` to write into: no
    allocation, for callers that plan many times (the sampler's rollouts)."""
    if not has_play(st):     # nothing to place or move: no search needed
        store_plan(mem, st, mem[PLAN0:], 0, 0)
        return STOP
    root_ok = not (avoid_block and would_block(st))
    n, _ = search(st, seat, w, max_nodes, 1, plans, lens, scores, True, root_ok, ws)
    if n == 0:               # cannot happen: some end of the turn is always legal
        return STOP
    store_plan(mem, st, plans[0], lens[0], 1 if lens[0] >= MAX_PLAN else 0)
    if lens[0] == 0:
        return STOP
    return plans[0, 0]


@nb.njit(cache=True)
def plan_turn(st, seat, mem, w, max_nodes, avoid_block=True):
    """Search the turn from the current position, keep the best line in ``mem`` and
    return its first action (or stop). One allocation: the workspace and the plan."""
    if not has_play(st):     # nothing to place or move: no search needed
        store_plan(mem, st, mem[PLAN0:], 0, 0)
        return STOP
    buf = np.empty(WS_SIZE + MAX_PLAN + 3, np.int64)
    ws = buf[:WS_SIZE]
    ws[:TABLE_SIZE] = 0
    plans = buf[WS_SIZE:WS_SIZE + MAX_PLAN + 1].reshape((1, MAX_PLAN + 1))
    lens = buf[WS_SIZE + MAX_PLAN + 1:WS_SIZE + MAX_PLAN + 2]
    scores = buf[WS_SIZE + MAX_PLAN + 2:]
    return plan_turn_in(st, seat, mem, w, max_nodes, avoid_block, ws, plans, lens, scores)


@nb.njit(cache=True)
def planner_act(st, seat, mem, w, max_nodes, avoid_block=True):
    """The planner's decision with evaluation weights ``w`` and a node cap."""
    a = next_planned(mem, st)
    if a >= 0:
        return a
    return plan_turn(st, seat, mem, w, max_nodes, avoid_block)


@kernel
def planner_act_in(st, seat, mem, w, max_nodes, ws, plans, lens, scores):
    """:func:`planner_act` in a reused workspace (see :func:`plan_turn_in`)."""
    a = next_planned(mem, st)
    if a >= 0:
        return a
    return plan_turn_in(st, seat, mem, w, max_nodes, True, ws, plans, lens, scores)


@compiled_policy
def planner_policy(st, seat, mem):
    """``planner``: at the start of its turn, searches every order of placements and pile
    moves it could make (de-duplicating equal positions, first empty side/corner only,
    at most 400 positions, pruning lines that cannot beat the best kept) and plays the line that leaves the lowest hand penalty, then
    the fewest openings for unseen cards, the fewest free sides and pile moves for the next
    player, and the fewest dead cards in hand (README, Stronger agents).

    The chosen line is kept in ``mem`` (turn number, start index, actions) and replayed one
    action per call; it re-plans if the position is not the one planned for.
    Deterministic: it never uses its random generator.
    """
    return planner_act(st, seat, mem, _W, MAX_NODES)


#: the registered agent (entry point ``planner``)
SPEC = AgentSpec("planner", "searches every order of its turn's placements and pile moves and plays the line "
                 "whose end position scores best: the penalty kept, weighed against what it opens to the next player",
                 policy=planner_policy, source="planner", mem_words=PLAN0)
