"""The ``sampler`` agent (compiled): determinized Monte Carlo over the planner's best plans.

At the start of each turn where it has something to play, the sampler

1. lists candidate plans for the turn: the ``K_PLANS`` best lines of the planner's turn
   search (:func:`agents.search.turn_search`) plus "stop now";
2. samples ``budget`` worlds consistent with what its seat has seen: the unseen cards
   (every card that is neither in its hand nor on the table) shuffled with its own
   generator (``mem[0]``) and dealt into the opponents' hands (of their known sizes) and
   the stock (of its known size), by :mod:`kc_sim.core.worlds`;
3. in every world (the same worlds for every candidate: common random numbers) plays the
   candidate, ends the turn (drawing from the sampled stock), and rolls the round out with
   the fast rollout policy for every seat (``greedy``; or ``planner`` with a small node
   cap, see :data:`ROLLOUT_NODES`), for at most :data:`HORIZON` more turns (to the end of
   the round once the stock is empty);
4. plays the candidate with the lowest mean of its objective: its own hand penalty minus
   the mean hand penalty of the opponents where the rollout stops, minus
   :data:`WIN_WEIGHT` if the seat won the round in the rollout, plus :data:`WIN_WEIGHT` if
   the round ended otherwise (another seat won, or it was blocked). Ties go to the earlier
   candidate (the planner's order).

When the planner's best line goes out it is played at once (the round is won; no world is
sampled). One search workspace (``agents.search.new_workspace``) serves the candidate
search and every rollout of a decision. Each candidate's own turn is played once per
decision, on the visible copy (it moves only the seat's cards and the piles); a world then
starts from that end of turn with the world's other hands and undrawn stock (copying only
the words play can still read), which plays exactly the same rollouts as replaying the
candidate in every world, 4% faster.

It reads only what its seat may see (its hand, the piles, the stock size, hand sizes and
the header); it never reads another hand or the stock order (``st[STOCK:]``), so the
hidden cards may be permuted without changing any decision (tested). The chosen plan is
kept in ``mem`` and replayed like the planner's.

Names: ``sampler`` uses :data:`DEFAULT_BUDGET` worlds per decision; ``sampler:N`` (or
``sampler-N``) uses N (1 to 4096), e.g. ``sampler:64``, recorded in results as
``sampler-64``. See docs/agents.md, Stronger agents.
"""

from __future__ import annotations

from functools import lru_cache

import numba as nb
import numpy as np

from agents.common import greedy_action
from agents.planner import planner_act_in
from agents.plans import MAX_PLAN, PLAN0, next_planned, store_plan
from agents.search import (
    DEFAULT_WEIGHTS,
    MAX_NODES,
    TABLE_SIZE,
    WS_SIZE,
    search,
)
from kc_sim.core.kernel import kernel
from kc_sim.core.layout import (
    DONE,
    HAND,
    HAND_N,
    PLAYERS,
    SEAT,
    STATE_SIZE,
    STOCK,
    STOCK_LEN,
    STOCK_POS,
    STOP,
    WINNER,
)
from kc_sim.core.legal import has_play, stop_legal
from kc_sim.core.policy import MEM_SIZE, POLICY_SIG, compiled_policy
from kc_sim.core.step import apply, hand_penalty
from kc_sim.core.worlds import copy_live, deal_world, unseen_cards, visible_copy
from kc_sim.play.agents.interface import AgentOption, AgentSpec

#: worlds sampled per decision by ``sampler``
DEFAULT_BUDGET = 16
#: most budget a ``sampler:N`` name may ask for
MAX_BUDGET = 4096
#: candidate plans taken from the turn search (plus "stop now")
K_PLANS = 4
#: node cap of the turn search that proposes the candidates
SEARCH_NODES = MAX_NODES
#: node cap of the planner used as the rollout policy for every seat; 0: the greedy
#: policy. Greedy rollouts are about 8x cheaper than the planner at 40 nodes and, measured
#: against ``planner`` on the same 5,000 duplicate deals, no weaker (62.1% of decided
#: rounds at 12 worlds against 61.2%), so the time goes into more worlds instead
ROLLOUT_NODES = 0
#: turns played after the candidate's own turn before the rollout is scored (4, 6 and 10
#: were equally strong with greedy rollouts; 4 is the cheapest)
HORIZON = 4
#: added to the objective when an opponent wins the rollout, taken off when the seat wins
WIN_WEIGHT = 10.0
#: decisions a rollout may take at most (a guard)
ROLLOUT_DECISIONS = 4000


_apply = nb.njit(inline="always")(apply.py_func)


@nb.njit(cache=True, inline="always")
def rollout_value(w, seat, win_w, block_loss):
    """The sampler's objective where a rollout stops (lower is better for ``seat``): its hand
    penalty minus the mean hand penalty of the others, minus ``win_w`` if it won the round,
    plus ``win_w`` if another seat won (or, with ``block_loss``, the round blocked)."""
    players = w[PLAYERS]
    mine = hand_penalty(w, seat)
    others = 0
    for s in range(players):
        if s != seat:
            others += hand_penalty(w, s)
    v = float(mine) - others / (players - 1)
    if w[DONE]:
        if w[WINNER] == seat:
            v -= win_w
        elif w[WINNER] >= 0 or block_loss:
            v += win_w
    return v


@kernel
def rollout(w, seat, pmem, horizon, nodes, win_w, block_loss, ws, plans, lens, scores):
    """Play the round in world ``w`` on with the rollout policy for every seat, for at most
    ``horizon`` turn changes; returns the seat's objective: its hand penalty minus the mean
    hand penalty of the others (and the win/loss terms). The planner's searches (``nodes``
    > 0) run in the shared workspace ``ws`` with ``plans``, ``lens``, ``scores``."""
    if nodes > 0:
        pmem[:, :] = 0
    turns = 0
    for _ in range(ROLLOUT_DECISIONS):
        if w[DONE] or turns >= horizon:
            break
        s = w[SEAT]
        if nodes > 0:
            a = planner_act_in(w, s, pmem[s], DEFAULT_WEIGHTS, nodes, ws, plans, lens, scores)
        else:
            a = greedy_action(w, s)
            if a < 0:
                a = STOP
        _apply(w, a)
        if a == STOP:
            turns += 1
    return rollout_value(w, seat, win_w, block_loss)


@nb.njit(cache=True, inline="always")
def turn_ends(vis, plans, lens, k, w):
    """Each candidate's turn played once on the visible copy ``vis`` (``w`` the scratch state):
    a plan moves only the seat's own cards and the piles (no candidate goes out: the line that
    does is played at once), so in every world the candidate's turn ends in this position
    with the world's other hands. Row i holds candidate i's end (the state before the stock
    area), or ``DONE`` set when its turn ended the round (cannot happen: a full replay then)."""
    ends = np.empty((k, STOCK), np.int64)
    for i in range(k):
        copy_live(w, vis)
        for j in range(lens[i]):
            apply(w, plans[i, j])
        if w[DONE]:
            ends[i, DONE] = 1
        else:
            for j in range(STOCK):
                ends[i, j] = w[j]
    return ends


@nb.njit(cache=True)
def open_decision(st, seat, mem, plans, lens, scores, ws):
    """The start of a sampling decision: ``(action, k)``. ``action >= 0`` when no world is
    needed (the turn's plan goes on, nothing can be played, the planner's best line goes out,
    or there is one candidate); otherwise -1, with the ``k`` candidates (the planner's best
    lines, then "stop" when legal) in ``plans``/``lens`` (``K_PLANS + 2`` rows; the last is
    the rollouts' own)."""
    a = next_planned(mem, st)
    if a >= 0:
        return a, 0
    if not has_play(st):
        store_plan(mem, st, mem[PLAN0:], 0, 0)
        return STOP, 0
    ws[:TABLE_SIZE] = 0
    k, _ = search(st, seat, DEFAULT_WEIGHTS, SEARCH_NODES, K_PLANS, plans, lens, scores, True, True, ws)
    if k > 0 and scores[0] == 0:          # the best line goes out: the round is won now
        return _play(mem, st, plans[0], lens[0]), k
    if not (lens[:k] == 0).any() and (k == 0 or stop_legal(st)):    # stop is a candidate
        lens[k] = 0
        k += 1
    if k == 1:
        return _play(mem, st, plans[0], lens[0]), k
    return -1, k


@nb.njit(cache=True)
def decision_buffers():
    """The arrays of one decision: candidate ``plans``, ``lens``, ``scores`` and the search
    workspace ``ws``."""
    k_max = K_PLANS + 2               # the candidates, stop, and the rollouts' plan
    return (np.zeros((k_max, MAX_PLAN + 1), np.int64), np.zeros(k_max, np.int64), np.zeros(k_max, np.int64),
            np.empty(WS_SIZE, np.int64))


@nb.njit(cache=True)
def world_setup(st, seat, plans, lens, k):
    """What every world of a decision starts from: ``(cards, n, vis, world, w, ends)``, the
    ``n`` unseen cards (``n`` is -1 when they do not add up to the hidden hands and stock,
    which cannot happen), the visible copy, two scratch states and each candidate's turn
    end on the visible copy (:func:`turn_ends`)."""
    cards = np.empty(104, np.int64)
    n = unseen_cards(st, seat, cards)
    expected = st[STOCK_LEN] - st[STOCK_POS]
    for s in range(st[PLAYERS]):
        if s != seat:
            expected += st[HAND_N + s]
    vis = np.empty(STATE_SIZE, np.int64)
    visible_copy(st, seat, vis)
    world = np.empty(STATE_SIZE, np.int64)
    w = np.empty(STATE_SIZE, np.int64)
    ends = turn_ends(vis, plans, lens, k, w)
    return cards, (n if n == expected else -1), vis, world, w, ends


@nb.njit(cache=True, inline="always")
def enter_world(w, ends, i, world, st, seat, plans, lens):
    """Candidate ``i`` played in ``world`` and its turn ended (the stop's draw from the world's
    stock): the position its rollout starts from, written into ``w``. ``ends``: the turns'
    ends on the visible copy (:func:`turn_ends`)."""
    if ends[i, DONE]:
        copy_live(w, world)
        for j in range(lens[i]):
            apply(w, plans[i, j])
    else:                             # the turn's end, with this world's other hands and stock
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


@nb.njit(cache=True)
def play_best(mem, st, plans, lens, total, k):
    """Play (and keep as the turn's plan) the candidate of lowest ``total``; ties go to the
    earlier candidate (the planner's order)."""
    best = 0
    for i in range(1, k):
        if total[i] < total[best]:
            best = i
    return _play(mem, st, plans[best], lens[best])


@nb.njit(cache=True)
def sampler_act(st, seat, mem, budget, horizon=HORIZON, nodes=ROLLOUT_NODES, win_w=WIN_WEIGHT, block_loss=True):
    """The sampler's decision with ``budget`` worlds per decision, rollouts of at most
    ``horizon`` turns with the planner capped at ``nodes`` positions (0: greedy)."""
    plans, lens, scores, ws = decision_buffers()
    a, k = open_decision(st, seat, mem, plans, lens, scores, ws)
    if a >= 0:
        return a
    if budget <= 0:
        return _play(mem, st, plans[0], lens[0])
    cards, n, vis, world, w, ends = world_setup(st, seat, plans, lens, k)
    if n < 0:                             # cannot happen: every card is somewhere
        return _play(mem, st, plans[0], lens[0])
    pmem = np.zeros((st[PLAYERS], MEM_SIZE), np.int64)
    total = np.zeros(k, np.float64)
    if st[STOCK_LEN] <= st[STOCK_POS]:      # no stock left: the round's end is near, play it out
        horizon = ROLLOUT_DECISIONS
    r = K_PLANS + 1                       # the rollouts' plan row
    rp, rl, rs = plans[r:], lens[r:], scores[r:]
    for _ in range(budget):
        deal_world(vis, st, seat, cards, n, mem, world)
        for i in range(k):
            enter_world(w, ends, i, world, st, seat, plans, lens)
            total[i] += rollout(w, seat, pmem, horizon, nodes, win_w, block_loss, ws, rp, rl, rs)
    return play_best(mem, st, plans, lens, total, k)


@nb.njit(cache=True)
def _play(mem, st, plan, n):
    store_plan(mem, st, plan, n, 1 if n >= MAX_PLAN else 0)
    if n == 0:
        return STOP
    return plan[0]


@compiled_policy
def sampler_policy(st, seat, mem):
    """``sampler``: determinized Monte Carlo. At the start of a turn with something to play,
    takes the planner's 4 best lines plus "stop" (or the line that goes out, at once), plays
    each in 16 worlds sampled from the cards its seat has not seen (the same worlds for every
    line), rolls each world out for 4 turns with greedy play for every seat, and keeps the
    line with the best mean of
    (own penalty - mean opponent penalty, -10 for a win, +10 for a loss or a blocked round).
    ``sampler:N`` samples N worlds. Random only from mem[0]: deterministic."""
    return sampler_act(st, seat, mem, DEFAULT_BUDGET)


@lru_cache(maxsize=None)
def sampler_with_budget(budget: int):
    """A compiled sampler policy with ``budget`` worlds per decision (compiled on first use)."""
    budget = int(budget)
    if budget == DEFAULT_BUDGET:
        return sampler_policy

    def policy(st, seat, mem):
        return sampler_act(st, seat, mem, budget)

    policy.__doc__ = (f"``sampler:{budget}``: the sampler (determinized Monte Carlo over the planner's best "
                      f"lines) with {budget} sampled worlds per decision.")
    return nb.njit(POLICY_SIG)(policy)


def _with_budget(budget: int) -> AgentSpec:
    """``sampler:N``: the sampler with N worlds per decision, named ``sampler-N``."""
    name = "sampler" if budget == DEFAULT_BUDGET else f"sampler-{budget}"
    return AgentSpec(name, f"the sampler with {budget} sampled worlds per decision",
                     policy=sampler_with_budget(budget), source=name, mem_words=PLAN0)


#: the registered agent (entry point ``sampler``; ``sampler:N`` picks the budget)
SPEC = AgentSpec("sampler", f"determinized Monte Carlo over the planner's best lines ({DEFAULT_BUDGET} sampled "
                 "worlds per decision; sampler:N for N)", policy=sampler_policy, source="sampler", mem_words=PLAN0,
                 option=AgentOption("worlds sampled per decision", 1, MAX_BUDGET, _with_budget))
