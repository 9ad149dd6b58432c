"""The ``king-first`` agent (compiled)."""

from __future__ import annotations

from agents.common import first_empty_corner, greedy_action, own_hand
from kc_sim.core.bits import lowest
from kc_sim.core.ids import move_id, place_id
from kc_sim.core.layout import N_SIDES, PILE_BASE, STOP
from kc_sim.core.policy import compiled_policy
from kc_sim.game.cards import KING, KINGS_MASK, RANK
from kc_sim.play.agents.interface import AgentSpec


@compiled_policy(allocates=False)
def king_first_policy(st, seat, mem):
    """``king-first``: shed kings early (the rule texts' advice), then play like ``greedy``.

    At every decision, in this order:

    1. If the hand holds a king and a corner is empty, place the king of **lowest card id**
       on the **first empty corner** (NE SE SW NW).
    2. Else, if a side pile has a king as its base and a corner is empty, **move** the
       first such side pile (N E S W) to the first empty corner, freeing its side, even
       when it has no card to put there.
    3. Otherwise play exactly like ``greedy``.

    Deterministic: it never uses its random generator.
    """
    corner = first_empty_corner(st)
    if corner >= 0:
        kings = own_hand(st, seat) & KINGS_MASK
        if kings:
            return place_id(lowest(kings), corner)
        for s in range(N_SIDES):
            b = st[PILE_BASE + s]
            if b >= 0 and RANK[b] == KING:
                return move_id(s, corner)
    a = greedy_action(st, seat)
    if a < 0:
        return STOP
    return a


#: the registered agent (entry point ``king-first``)
SPEC = AgentSpec("king-first", "puts every king it can into a corner first, then plays like greedy",
                 policy=king_first_policy, source="king-first", mem_words=0)
