"""Play the same round through the compiled core (via the step API) and the reference,
comparing them at every decision. Used by the differential tests."""

from __future__ import annotations

import random

from kc_sim.core import layout as L
from kc_sim.core.legal import count_plays, has_play, nth_play
from kc_sim.game.reference import RefRound
from kc_sim.game.rules import RuleSet
from kc_sim.play.table.game import Game
from kc_sim.testing import round_rule_sets as rule_sets  # noqa: F401 - the tests import it from here


def player_counts(rules: RuleSet):
    return range(2, rules.max_players + 1)


def position(obj) -> tuple:
    """Comparable position of a Game or a RefRound."""
    if isinstance(obj, Game):
        return (obj.seat, [obj.hand(s) for s in range(obj.players)], obj.piles, obj.stock, obj.drew)
    return (obj.seat, [sorted(h) for h in obj.hands], [list(p) for p in obj.piles], list(obj.stock), obj.drew)


def play_both(rules: RuleSet, players: int, seed: int, stop_bias: float = 0.15) -> int:
    """Play one round through both engines with the same random choices; assert they agree.
    Returns the number of decisions made."""
    g = Game(players, rules, seed)
    deck = [int(c) for c in g.state[L.STOCK:L.STOCK + g.state[L.STOCK_LEN]]]
    ref = RefRound(rules, players, g.dealer, deck)
    rng = random.Random(seed)
    decisions = 0
    ctx = f"rules={rules.spec()} players={players} seed={seed}"
    assert position(g) == position(ref), f"deal differs: {ctx}"
    while not ref.over:
        legal = set(g.legal_actions())
        assert legal == ref.legal_actions(), f"legal sets differ at decision {decisions}: {ctx}"
        plays = legal - {L.STOP}
        k = count_plays(g.state)
        assert k == len(plays) and has_play(g.state) == bool(plays), f"play count wrong: {ctx}"
        assert {nth_play(g.state, i) for i in range(k)} == plays, f"nth_play misses plays: {ctx}"
        if g.turn_actions == 0:
            assert position(g) == position(ref), f"positions differ at turn {g.turns}: {ctx}"
        choices = sorted(legal)
        if 448 in legal and rng.random() < stop_bias:
            a = 448
        else:
            a = rng.choice(choices)
        g.play(a)
        ref.play(a)
        decisions += 1
        assert g.over == ref.over, f"round end differs after decision {decisions}: {ctx}"
    assert (g.end, g.winner, g.penalties, g.turns) == (ref.end, ref.winner, ref.penalties, ref.turns), ctx
    assert position(g)[1:4] == position(ref)[1:4], f"final positions differ: {ctx}"
    return decisions


def sweep(rules: RuleSet, min_decisions: int, seed0: int = 0) -> int:
    """Play rounds for every player count of ``rules`` in turn until ``min_decisions`` are made."""
    counts = list(player_counts(rules))
    total, i = 0, 0
    while total < min_decisions:
        total += play_both(rules, counts[i % len(counts)], seed0 + i)
        i += 1
    return total
