"""Invariants of every round, on random rule sets, player counts, seeds and choices."""

import random
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from kc_sim.game.cards import COLOUR, RANK
from kc_sim.game.reference import card_penalty
from kc_sim.play.table.game import Game
from tests.helpers.differential import rule_sets

RULE_SETS = rule_sets()

rounds = st.tuples(
    st.sampled_from(RULE_SETS), st.integers(2, 8), st.integers(0, 2**62), st.floats(0.0, 1.0)
).map(lambda t: (t[0], 2 + (t[1] - 2) % (t[0].max_players - 1), t[2], t[3]))


def check_invariants(g: Game):
    copies = g.rules.decks
    seen = Counter(c for s in range(g.players) for c in g.hand(s))
    seen.update(c for p in g.piles for c in p)
    seen.update(g.stock)
    assert seen == Counter({c: copies for c in range(52)}), "every card exactly once (twice with two decks)"
    for p, pile in enumerate(g.piles):
        for below, above in zip(pile, pile[1:]):
            assert RANK[above] == RANK[below] - 1 and COLOUR[above] != COLOUR[below], (p, pile)
        if p >= 4 and pile:
            assert RANK[pile[0]] == 13, "a corner pile has a king for its base"


@settings(max_examples=150, deadline=None)
@given(rounds)
def test_round_invariants(case):
    rules, players, seed, stop_bias = case
    g = Game(players, rules, seed)
    rng = random.Random(seed)
    check_invariants(g)
    for _ in range(5000):
        if g.over:
            break
        legal = g.legal_actions()
        g.play(448 if 448 in legal and rng.random() < stop_bias else rng.choice(legal))
        check_invariants(g)
    assert g.over, "the round ended"
    assert g.penalties == [sum(card_penalty(c, rules.scoring) for c in g.hand(s)) for s in range(players)]
    if g.end == "out":
        assert g.hand(g.winner) == [] and g.penalties[g.winner] == 0
    else:
        assert g.winner is None
        assert g.stock == [] or rules.draw == "if_stuck", "only if_stuck leaves idle turns with a stock"


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(RULE_SETS), st.integers(0, 2**62))
def test_same_seed_same_deal(rules, seed):
    a, b = Game(rules.max_players, rules, seed), Game(rules.max_players, rules, seed)
    assert a.snapshot() == b.snapshot()
    assert Game(rules.max_players, rules, seed + 1).snapshot() != a.snapshot()
