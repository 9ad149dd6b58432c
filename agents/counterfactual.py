"""Counterfactual agents: a base policy with exactly ONE of its choices changed.

The rule texts give three pieces of advice (docs/rules.md, Strategy hints): shed kings
early, merge whole piles to free sides, put high cards on freed sides. Comparing two
*different* agents (``king-first`` against ``greedy``) cannot isolate any of them: the
agents differ in several choices at once, or, as it happens for ``king-first``, in
almost none. Each agent here is its base (``greedy`` or ``pile-merger``) with one
choice turned the other way and every other decision left exactly as the base makes
it, so a head-to-head of the pair measures the worth of that one choice.

The rule of each counterfactual (``base choice`` -> ``changed choice``; every other
decision is the base's own, computed by the base's code):

* ``greedy-kings-last`` (shed kings early, within the turn): where greedy would place a
  king or move a king-based side pile while some other play of greedy's kind exists
  (a non-king card to place, or a move of a pile whose base is not a king that frees a
  side for a non-king card of the hand), it makes that other play instead. The kings
  still go down in the same turn, after everything else.
* ``greedy-hold-kings`` (shed kings early, across turns): a turn that begins with some
  non-king play available is a *holding* turn: it makes only non-king plays (as
  ``greedy-kings-last`` picks them) and stops when they run out, keeping its kings in
  hand. A king is placed, or a king-based side pile moved, only in a turn that begins
  with nothing else to play (then the turn is greedy's), or when the rules forbid the
  stop (``must_play_kings=true`` with a king in hand and a corner empty).
* ``greedy-kings-sides`` (a king in a corner or on a side): where greedy would put a
  king on an empty corner and sides take kings (``king_on_empty_side=true``), it puts it
  on the first empty side instead; with no side empty it first frees one with the first
  legal pile move (greedy's own move rule), and the next decision puts the king there.
  The move is needed: no agent here ever ends a turn with an empty side (each fills it),
  and greedy places a king before any move, so "a king in hand, a corner and a side both
  empty" never occurs in greedy's play (0 of some 37,000 decisions, against greedy and
  random). Identical to greedy under ``king_on_empty_side=false`` (``draw_first``).
* ``greedy-no-merge`` (merge piles to free a side for an awkward card): greedy with its
  pile moves switched off. Greedy moves a pile only when nothing is placeable and the
  freed side would take a hand card; here it stops instead. The rules never force a move.
* ``merger-no-merge`` (merge eagerly): ``pile-merger`` with every pile move switched off
  (its step 1 and the moves of the greedy step it ends with). This is **not** greedy:
  pile-merger's step 2 (fill an empty side with its highest card, before any placement
  on a pile) stays, so a 9 goes on an empty side where greedy would put it on a 10.
* ``greedy-low-sides`` (high or low cards on freed sides): where greedy would place its
  highest placeable card on an empty side (that card fits no pile with cards, and is not
  a king for an empty corner), it places instead the **lowest-ranked** hand card with
  the same property on the same side (lowest card id among equal ranks; often the same
  card).
* ``merger-low-sides``: ``pile-merger``'s step 2 with the lowest-ranked card the empty
  side takes instead of the highest (a king still only when no corner is empty).

All are compiled, deterministic (none draws a random number) and read only what their
seat may see. ``greedy-hold-kings`` keeps one word in ``mem``: ``mem[1]`` = the turn
number + 1 of the current holding turn (0: none).
"""

from __future__ import annotations

import numba as nb
import numpy as np

from agents.common import (
    best_pile,
    empty_side_mask,
    first_empty_corner,
    first_empty_side,
    first_move,
    greedy_action,
    highest_rank_card,
    lowest_rank_card,
    move_mask,
    own_hand,
    placeable,
)
from agents.merger import merger_choice, side_fill
from kc_sim.core.bits import lowest
from kc_sim.core.ids import (
    id_card,
    id_pile,
    id_side,
    is_corner,
    is_move,
    is_place,
    place_id,
)
from kc_sim.core.layout import (
    MOVE_BASE,
    N_PILES,
    PILE_BASE,
    PILE_TOP,
    RULES,
    STOP,
    TURN_ACTIONS,
    TURNS,
)
from kc_sim.core.legal import stop_legal
from kc_sim.core.policy import compiled_policy
from kc_sim.game.cards import FITS_ON, KING, NON_KINGS_MASK, RANK
from kc_sim.game.variants import R_KING_ON_EMPTY_SIDE
from kc_sim.play.agents.interface import AgentSpec

#: mem slot of ``greedy-hold-kings``: turn number + 1 of the current holding turn
M_HOLD_TURN = 1


# --- shared pieces -----------------------------------------------------------------------

@nb.njit(cache=True, inline="always")
def is_king_action(st, a):
    """Does action ``a`` place a king or move a side pile whose base is a king?"""
    if a < 0 or a == STOP:
        return False
    if is_place(a):
        return RANK[id_card(a)] == KING
    if is_move(a):
        return RANK[st[PILE_BASE + id_side(a)]] == KING
    return False


@nb.njit(cache=True, inline="always")
def first_non_king_move(st):
    """The first legal whole-side-pile move (action-id order) of a pile whose base is not
    a king, or -1."""
    mm = move_mask(st)
    while mm:
        b = lowest(mm)
        mm &= mm - 1
        a = MOVE_BASE + b
        if RANK[st[PILE_BASE + id_side(a)]] != KING:
            return a
    return -1


@nb.njit(cache=True, inline="always")
def non_king_greedy(st, seat):
    """Greedy's choice with the kings taken out: the highest-ranked placeable non-king card
    (on greedy's pile), else, if the freed side would take a non-king card of the hand, the
    first move of a pile whose base is not a king; -1 if there is none."""
    hand = own_hand(st, seat) & np.int64(NON_KINGS_MASK)
    m = placeable(st, hand)
    if m:
        c = highest_rank_card(m)
        return place_id(c, best_pile(st, c))
    if hand & empty_side_mask(st):
        return first_non_king_move(st)
    return -1


@nb.njit(cache=True, inline="always")
def fits_a_pile(st):
    """The cards that fit the top of some pile with cards."""
    t = np.int64(0)
    for p in range(N_PILES):
        top = st[PILE_TOP + p]
        if top >= 0:
            t |= FITS_ON[top]
    return t


@nb.njit(cache=True, inline="always")
def greedy_placement(st, seat):
    """Greedy's placement step alone: the highest-ranked placeable card on greedy's pile, or -1."""
    m = placeable(st, own_hand(st, seat))
    if m:
        c = highest_rank_card(m)
        return place_id(c, best_pile(st, c))
    return -1


# --- the policies --------------------------------------------------------------------------

@compiled_policy
def greedy_kings_last_policy(st, seat, mem):
    """``greedy-kings-last``: greedy, but a king (placed, or as the base of a side pile
    moved to a corner) comes after every other play greedy would make this turn.

    If greedy's choice is a king action and ``non_king_greedy`` has a play, make that play;
    otherwise greedy's choice."""
    a = greedy_action(st, seat)
    if is_king_action(st, a):
        b = non_king_greedy(st, seat)
        if b >= 0:
            return b
    if a < 0:
        return STOP
    return a


@compiled_policy
def greedy_hold_kings_policy(st, seat, mem):
    """``greedy-hold-kings``: greedy, but kings stay in hand through every turn that has
    something else to play.

    At the first decision of a turn (no action yet this turn), if a non-king play exists
    (``non_king_greedy``), the turn is a holding turn (``mem[1]`` = turn + 1). In a holding
    turn it makes only non-king plays and stops when they run out, unless stopping is not
    legal (``must_play_kings``), where it makes greedy's choice. In any other turn it is
    greedy."""
    if st[TURN_ACTIONS] == 0:
        mem[M_HOLD_TURN] = 0
        if non_king_greedy(st, seat) >= 0:
            mem[M_HOLD_TURN] = st[TURNS] + 1
    if mem[M_HOLD_TURN] == st[TURNS] + 1:
        b = non_king_greedy(st, seat)
        if b >= 0:
            return b
        if stop_legal(st):
            return STOP
    a = greedy_action(st, seat)
    if a < 0:
        return STOP
    return a


@compiled_policy
def greedy_kings_sides_policy(st, seat, mem):
    """``greedy-kings-sides``: greedy, but a king greedy would put on an empty corner goes
    to the first empty side instead when sides take kings (king_on_empty_side=true),
    freeing a side first with the first legal pile move when none is empty."""
    a = greedy_action(st, seat)
    if a < 0:
        return STOP
    if is_place(a) and RANK[id_card(a)] == KING and is_corner(id_pile(a)) and st[RULES + R_KING_ON_EMPTY_SIDE]:
        side = first_empty_side(st)
        if side >= 0:
            return place_id(id_card(a), side)
        m = first_move(st)
        if m >= 0:
            return m
    return a


@compiled_policy
def greedy_no_merge_policy(st, seat, mem):
    """``greedy-no-merge``: greedy with its pile moves switched off: it places its
    highest-ranked placeable card (greedy's pile), and stops where greedy would move a pile."""
    a = greedy_placement(st, seat)
    if a < 0:
        return STOP
    return a


@compiled_policy
def merger_no_merge_policy(st, seat, mem):
    """``merger-no-merge``: pile-merger with every pile move switched off: fill the first
    empty side with its highest card (a king only when no corner is empty), else greedy's
    placement, else stop."""
    a = side_fill(st, seat, False)
    if a >= 0:
        return a
    a = greedy_placement(st, seat)
    if a < 0:
        return STOP
    return a


@compiled_policy
def greedy_low_sides_policy(st, seat, mem):
    """``greedy-low-sides``: greedy, but where greedy would put its highest card on an empty
    side, the lowest-ranked hand card that would also go there (fits no pile with cards,
    not a king for an empty corner) goes on that side instead."""
    a = greedy_action(st, seat)
    if a < 0:
        return STOP
    if is_place(a) and not is_corner(id_pile(a)) and st[PILE_TOP + id_pile(a)] < 0:
        cand = own_hand(st, seat) & empty_side_mask(st) & ~fits_a_pile(st)
        if first_empty_corner(st) >= 0:
            cand &= np.int64(NON_KINGS_MASK)
        if cand:                      # never empty: greedy's card is in it
            return place_id(lowest_rank_card(cand), id_pile(a))
    return a


@compiled_policy
def merger_low_sides_policy(st, seat, mem):
    """``merger-low-sides``: pile-merger, but its step 2 fills the first empty side with the
    lowest-ranked hand card the side takes instead of the highest (a king only when no
    corner is empty)."""
    return merger_choice(st, seat, True)


#: the registered agents (entry points named as the specs), and the base each one changes
KINGS_LAST = AgentSpec("greedy-kings-last", "greedy, but kings after every other play of the turn "
                       "(counterfactual of greedy)", policy=greedy_kings_last_policy, source="greedy-kings-last")
HOLD_KINGS = AgentSpec("greedy-hold-kings", "greedy, but it keeps its kings through every turn with something "
                       "else to play (counterfactual of greedy)", policy=greedy_hold_kings_policy,
                       source="greedy-hold-kings")
KINGS_SIDES = AgentSpec("greedy-kings-sides", "greedy, but kings on an empty side rather than a corner where legal "
                        "(counterfactual of greedy)", policy=greedy_kings_sides_policy, source="greedy-kings-sides")
GREEDY_NO_MERGE = AgentSpec("greedy-no-merge", "greedy without its pile moves (counterfactual of greedy)",
                            policy=greedy_no_merge_policy, source="greedy-no-merge")
MERGER_NO_MERGE = AgentSpec("merger-no-merge", "pile-merger without any pile move (counterfactual of pile-merger)",
                            policy=merger_no_merge_policy, source="merger-no-merge")
LOW_SIDES = AgentSpec("greedy-low-sides", "greedy, but its lowest card rather than its highest on an empty side "
                      "(counterfactual of greedy)", policy=greedy_low_sides_policy, source="greedy-low-sides")
MERGER_LOW_SIDES = AgentSpec("merger-low-sides", "pile-merger, but it fills empty sides with its lowest card "
                             "(counterfactual of pile-merger)", policy=merger_low_sides_policy,
                             source="merger-low-sides")

#: counterfactual name -> (base name, spec)
COUNTERFACTUALS = {
    "greedy-kings-last": ("greedy", KINGS_LAST),
    "greedy-hold-kings": ("greedy", HOLD_KINGS),
    "greedy-kings-sides": ("greedy", KINGS_SIDES),
    "greedy-no-merge": ("greedy", GREEDY_NO_MERGE),
    "merger-no-merge": ("pile-merger", MERGER_NO_MERGE),
    "greedy-low-sides": ("greedy", LOW_SIDES),
    "merger-low-sides": ("pile-merger", MERGER_LOW_SIDES),
}
