"""An example Python agent: copy this file to start your own.

Use it by name wherever agents are named::

    kc-sim ... agents/examples/my_python_agent.py:CautiousShedder
    kc_sim.play.runner.play_rounds(["agents.examples.my_python_agent:CautiousShedder", "greedy"], seeds, "classic")

or run it: ``python agents/examples/my_python_agent.py`` plays 200 rounds against
``greedy`` and prints the average penalties.

The agent sees a :class:`kc_sim.play.observation.SeatView` of its own seat (never another hand or
the stock order) and returns one of ``obs.legal`` (an action id) or its text.
"""

from __future__ import annotations

from kc_sim.game.actions import MOVE_BASE, STOP
from kc_sim.game.cards import RANK
from kc_sim.play.agent import PythonAgent


class CautiousShedder(PythonAgent):
    """Places its highest card that fits a non-empty pile; puts only cards of rank 8 or more
    on empty sides; moves a pile only when it has nothing to place; now and then (10%)
    stops early."""

    name = "cautious-shedder"

    def new_match(self, seat, players, rules):
        # called once before a match (or a run of single rounds)
        self.rounds_played = 0

    def new_round(self, seat, players, rules, seed):
        super().new_round(seat, players, rules, seed)   # keeps self.rng seeded for this round
        self.rounds_played += 1
        self.seat = seat

    def act(self, obs):
        # Everything visible: obs.hand, obs.piles (base first), obs.tops, obs.stock_size,
        # obs.hand_sizes, obs.scores, obs.turn_actions, obs.drew, obs.legal, obs.legal_text.
        legal = obs.legal
        places = [a for a in legal if a < MOVE_BASE]
        moves = [a for a in legal if MOVE_BASE <= a < STOP]
        tops = obs.tops
        on_piles = [a for a in places if tops[a & 7] >= 0]
        high_on_empty = [a for a in places if tops[a & 7] < 0 and RANK[a >> 3] >= 8]
        choice = on_piles or high_on_empty
        if choice and obs.turn_actions > 0 and STOP in legal and self.rng.random() < 0.1:
            return "stop"                     # a cautious pause (text works as well as ids)
        if choice:
            return max(choice, key=lambda a: (RANK[a >> 3], -a))
        if moves:
            return moves[0]
        if STOP in legal:
            return STOP                       # keep the empty sides for better cards
        return legal[0]                       # must_play_kings: a king must go down first

if __name__ == "__main__":
    import numpy as np

    from kc_sim.core import loop
    from kc_sim.play.runner import play_rounds

    me = f"{__file__}:CautiousShedder"
    rows = play_rounds([me, "greedy"], np.arange(200), "classic")
    pen = rows[:, loop.C_PENALTY:loop.C_PENALTY + 2].mean(axis=0)
    print(f"200 rounds vs greedy: mean penalty {pen[0]:.2f} (CautiousShedder) vs {pen[1]:.2f} (greedy)")
