"""The one explainer of illegal actions for people (``kc_sim.play.table.game.why_illegal``, used by
``Game.play``, ``RecordedRound``, ``kc-sim play`` and ``kc-sim replay``) gives the same verdict
as the reference engine's own reading (``RefRound.why_illegal``) on random positions."""

from __future__ import annotations

import random

import pytest

from kc_sim.core import layout
from kc_sim.game.reference import RefRound
from kc_sim.play.table.game import Game, IllegalActionError, why_illegal
from kc_sim.play.recording.recorded import RecordedRound
from kc_sim.testing import round_rule_sets

RULE_SETS = round_rule_sets()[::6]          # 16 of the 96, every switch value among them
IDS = list(range(-1, layout.N_ACTIONS + 1))  # every action id, and one out of range at each end


def _verdicts(g: Game, ref: RefRound, where: str) -> int:
    """Compare legal / illegal for every id; returns how many were illegal."""
    illegal = 0
    for a in IDS:
        ours, theirs = why_illegal(g, a), ref.why_illegal(a)
        assert (ours is None) == (theirs is None), f"{where}, action {a}: ours {ours!r}, reference {theirs!r}"
        if ours is not None:
            assert isinstance(ours, str) and ours, f"{where}, action {a}: an empty reason"
            illegal += 1
    return illegal


@pytest.mark.parametrize("rules", RULE_SETS, ids=lambda r: r.spec())
def test_why_illegal_agrees_with_the_reference(rules):
    rng = random.Random(rules.spec())
    counts = range(2, rules.max_players + 1)
    checked = 0
    for i in range(2):
        players = counts[i % len(counts)]
        g = Game(players, rules, seed=rng.randrange(1 << 30))
        deck = [int(c) for c in g.state[layout.STOCK:layout.STOCK + g.state[layout.STOCK_LEN]]]
        ref = RefRound(rules, players, g.dealer, deck)
        decision = 0
        while not g.over:
            if decision % 6 == 0:              # a sample of positions, turn starts and mid-turn alike
                assert _verdicts(g, ref, f"{rules.spec()}, {players} players, decision {decision}") > 0
                checked += 1
            legal = g.legal_actions()
            a = layout.STOP if layout.STOP in legal and rng.random() < 0.2 else rng.choice(legal)
            g.play(a)
            ref.play(a)
            decision += 1
        assert _verdicts(g, ref, f"{rules.spec()}: round over") == len(IDS)   # nothing is legal any more
    assert checked > 5


def test_game_and_recorded_round_refuse_with_the_reason():
    g = Game(players=2, rules="classic", seed=3)
    bad = next(a for a in range(layout.N_ACTIONS) if why_illegal(g, a) is not None)
    rr = RecordedRound(g)
    before = (list(rr.turns), g.snapshot())
    with pytest.raises(IllegalActionError, match=why_illegal(g, bad).split("(")[0].strip()[:30]):
        rr.play(bad)
    assert (rr.turns, g.snapshot()) == before                      # nothing applied, nothing logged
    with pytest.raises(IllegalActionError, match="no such action id 449"):
        g.play(449)
