"""The ``pile-merger`` agent (alias ``merger``, compiled)."""

from __future__ import annotations

import numba as nb
import numpy as np

from agents.common import (
    empty_side_mask,
    first_empty_corner,
    first_empty_side,
    first_move,
    greedy_place,
    highest_rank_card,
    lowest_rank_card,
    own_hand,
)
from kc_sim.core.ids import place_id
from kc_sim.core.layout import STOP
from kc_sim.core.policy import compiled_policy
from kc_sim.game.cards import NON_KINGS_MASK
from kc_sim.play.agents.interface import AgentSpec


@nb.njit(cache=True, inline="always")
def side_fill(st, seat, low):
    """Step 2 below: on the first empty side, the highest-ranked (``low``: the lowest-ranked)
    hand card the side takes, a king only when no corner is empty; -1 if no side is empty
    or no card fits."""
    side = first_empty_side(st)
    if side < 0:
        return -1
    ok = own_hand(st, seat) & empty_side_mask(st)
    if first_empty_corner(st) >= 0:
        ok &= np.int64(NON_KINGS_MASK)
    if not ok:
        return -1
    if low:
        return place_id(lowest_rank_card(ok), side)
    return place_id(highest_rank_card(ok), side)


@nb.njit(cache=True, inline="always")
def merger_choice(st, seat, low):
    """The three steps of ``pile-merger`` (:func:`merger_policy`), step 2 with the lowest card when ``low``."""
    a = first_move(st)
    if a >= 0:
        return a
    a = side_fill(st, seat, low)
    if a >= 0:
        return a
    # step 3, greedy's choice: its placement, as no pile move is legal here (step 1)
    a = greedy_place(st, seat)
    if a < 0:
        return STOP
    return a


@compiled_policy(allocates=False)
def merger_policy(st, seat, mem):
    """``pile-merger`` (alias ``merger``): merge piles to free sides, fill the freed sides
    with high cards, then play like ``greedy``.

    At every decision, in this order:

    1. If any whole-side-pile move is legal, make the **first** in action-id order (side
       N E S W, then target N E S W NE SE SW NW), whether or not it lets it place a card.
    2. Else, if a side is empty, place on the **first empty side** the hand card of
       **highest rank** that the side takes (lowest card id among equal ranks); a king
       only when no corner is empty (kings go to corners in step 3).
    3. Otherwise play exactly like ``greedy``.

    Every move empties a side and every placement on a side sheds a card, so a turn
    always ends. Deterministic: it never uses its random generator.
    """
    return merger_choice(st, seat, False)


#: the registered agent (entry points ``pile-merger`` and its alias ``merger``)
SPEC = AgentSpec("pile-merger", "makes every pile move it can, fills freed sides with its highest cards, "
                 "then plays like greedy", policy=merger_policy, source="pile-merger", mem_words=0)
