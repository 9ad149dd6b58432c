"""A faulty Python agent for tests/ui/test_terminal.py: plays legally (the first legal
action) for its first two rounds in a process, then, from its third round on, returns an
action id that is not among ``obs.legal``."""

from kc_sim.game.actions import STOP
from kc_sim.play.agents.interface import PythonAgent


class Buggy(PythonAgent):
    name = "Buggy"

    def __init__(self, seed: int = 0):
        super().__init__(seed)
        self.rounds = 0

    def new_round(self, seat, players, rules, seed):
        super().new_round(seat, players, rules, seed)
        self.rounds += 1

    def act(self, obs):
        legal = list(obs.legal)
        if self.rounds < 3:
            return legal[0]
        # the smallest valid action id that is illegal here (a card not in hand, ...)
        return next(a for a in range(STOP + 1) if a not in legal)
