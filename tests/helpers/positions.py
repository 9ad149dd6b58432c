"""Helpers for tests that set up a position by hand and let a compiled policy play a turn."""

import numpy as np

from kc_sim.core.layout import STOP
from kc_sim.core.policy import MEM_SIZE
from kc_sim.game.actions import action_text
from kc_sim.play.table.game import Game


def play_turn(policy, g: Game, seed: int = 1, mem=None) -> list[str]:
    """Let ``policy`` play the current turn of ``g`` to its stop; the actions as text.
    ``mem`` is the policy's memory row (a fresh one seeded with ``seed`` by default)."""
    if mem is None:
        mem = np.zeros(MEM_SIZE, dtype=np.int64)
        mem[0] = seed
    seat, turns, out = g.seat, g.turns, []
    while not g.over and g.seat == seat and g.turns == turns:
        a = int(policy(g.state, g.seat, mem))
        if a == STOP:
            g.play(a)
            break
        out.append(action_text(a))
        g.play(a)
    return out


def position(hand, piles, other=("2C", "2D", "2H"), rules="classic", stock=("3D", "4D")) -> Game:
    """Seat 1 to act (dealer 0) holding ``hand``; seat 0 holds ``other``."""
    return Game.from_position([list(other), list(hand)], piles, list(stock), dealer=0, rules=rules)
