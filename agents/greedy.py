"""The ``greedy`` agent (compiled) and its Python twin :class:`PythonGreedy`."""

from __future__ import annotations

from agents.common import greedy_action
from kc_sim.core.policy import compiled_policy
from kc_sim.game.actions import (
    STOP,
    id_card,
    id_pile,
    is_corner,
    is_move,
    is_place,
    place_id,
)
from kc_sim.game.cards import KING, RANK
from kc_sim.play.agents.interface import AgentSpec, PythonAgent


@compiled_policy(allocates=False)
def greedy_policy(st, seat, mem):
    """``greedy``: shed as many cards as it can this turn, highest rank first.

    At every decision, in this order:

    1. If some hand card can be placed, place the one of **highest rank** (a king, which
       costs 10, before a queen, ... before an ace; among equal ranks the lowest card id,
       suits C D H S). It goes on the **first non-empty pile** (N E S W NE SE SW NW) whose
       top it fits, else (a king) on the **first empty corner**, else on the **first
       empty side**.
    2. Otherwise, if the hand holds a card an empty side would take (any card; no king
       with king_on_empty_side=false), make the **first legal whole-pile move** in action-id
       order (side N E S W, then target N E S W NE SE SW NW): every move frees a side, so it
       lets the agent place a card now. It never moves a pile otherwise.
    3. Otherwise stop.

    Deterministic: it never uses its random generator.
    """
    a = greedy_action(st, seat)
    if a < 0:
        return STOP
    return a


class PythonGreedy(PythonAgent):
    """A Python twin of ``greedy``: the same policy, from the observation alone. It plays
    exactly the rounds the compiled ``greedy`` plays from the same seeds."""

    name = "greedy-python"

    def act(self, obs):
        legal = obs.legal
        places = [a for a in legal if is_place(a)]
        if places:
            # highest rank, then lowest card id
            card = min((id_card(a) for a in places), key=lambda c: (-int(RANK[c]), c))
            piles = obs.piles
            targets = [id_pile(a) for a in places if id_card(a) == card]
            nonempty = [p for p in targets if piles[p]]
            if nonempty:
                return place_id(card, min(nonempty))
            corners = [p for p in targets if is_corner(p)]
            if corners and RANK[card] == KING:
                return place_id(card, min(corners))
            return place_id(card, min(targets))
        moves = [a for a in legal if is_move(a)]
        side_takes_a_card = any(RANK[c] != KING for c in obs.hand) or obs.rules.king_on_empty_side
        if moves and side_takes_a_card:
            return min(moves)
        return STOP


#: the registered agent (entry point ``greedy``)
SPEC = AgentSpec("greedy", "sheds as many cards as it can, highest rank first; moves a pile only to place a card now",
                 policy=greedy_policy, source="greedy", mem_words=0)
