"""Deal features (kc_sim.core.features): a hand-counted deal, an independent recount over
many deals and rule sets, and the expectation of the features from unplayed deals."""

import numpy as np
import pytest

from kc_sim.core import layout as L
from kc_sim.core import step
from kc_sim.core.features import deal_features, expected_features, feature_names
from kc_sim.game.cards import COLOUR, RANK
from kc_sim.game.rules import parse_rules


def test_hand_counted_deal():
    # seed 7, 2 players, dealer 1 (so seat 0 plays first):
    #   p0 (seat 0): AD 3D 4D 9H 3S TS QS     p1 (seat 1): 3C 7C 9C 6D 7D TD 5H
    #   sides N E S W: 6S 2S 4S QH; the stock opens 5S 8C; no king outside the stock
    # p0: AD fits 2S, 3D fits 4S -> fit 2; 3S on 4D, 9H on TS -> chain 2; ranks 42/7
    # p1: 5H fits 6S -> fit 1; 6D on 7C, 9C on TD -> chain 2; ranks 47/7
    x = dict(zip(feature_names(2), deal_features([7], [1], 2, parse_rules("classic"))[0]))
    assert x == pytest.approx({
        "kings_p0": 0, "fit_p0": 2, "chain_p0": 2, "rank_p0": 6.0,
        "kings_p1": 0, "fit_p1": 1, "chain_p1": 2, "rank_p1": 47 / 7,
        "layout_kings": 0, "layout_aces": 0, "merges": 0, "layout_rank": 6.0,
        "stock_kings": 4, "soon_kings": 0, "soon_fit": 0})


def _fits(x, y):
    """Card x fits on card y: one rank lower, the other colour."""
    return RANK[x] == RANK[y] - 1 and COLOUR[x] != COLOUR[y]


def _recount(seed, players, dealer, rules):
    """The features counted in plain Python from the dealt state, by the rules' words."""
    st = np.zeros(L.STATE_SIZE, np.int64)
    step.shuffle_stock(st, seed, rules.decks)
    step.deal_stock(st, players, dealer, rules.codes())
    tops = [st[L.PILE_TOP + p] for p in range(4)]
    bases = [st[L.PILE_BASE + p] for p in range(8)]
    corner_empty = any(st[L.PILE_TOP + p] < 0 for p in range(4, 8))
    out = []
    for j in range(players):
        seat = (dealer + 1 + j) % players
        hand = [c for plane in range(2) for c in range(52) if (int(st[L.HAND + 2 * seat + plane]) >> c) & 1]
        kings = sum(RANK[c] == 13 for c in hand)
        fit = sum(any(t >= 0 and _fits(c, t) for t in tops) or (RANK[c] == 13 and corner_empty) for c in hand)
        chain = sum(_fits(x, y) for x in hand for y in hand)
        out += [kings, fit, chain, sum(RANK[c] for c in hand) / len(hand)]
    all_tops = [st[L.PILE_TOP + p] for p in range(8)]
    sides = [s for s in range(4) if tops[s] >= 0]
    merges = sum(any(p != s and all_tops[p] >= 0 and _fits(bases[s], all_tops[p]) for p in range(8))
                 or (RANK[bases[s]] == 13 and corner_empty) for s in sides)
    stock = [st[L.STOCK + i] for i in range(st[L.STOCK_POS], st[L.STOCK_LEN])]
    soon = stock[:players]
    out += [sum(b >= 0 and RANK[b] == 13 for b in bases), sum(RANK[tops[s]] == 1 for s in sides), merges,
            sum(RANK[tops[s]] for s in sides) / len(sides), sum(RANK[c] == 13 for c in stock),
            sum(RANK[c] == 13 for c in soon), sum(any(t >= 0 and _fits(c, t) for t in tops) for c in soon)]
    return out


@pytest.mark.parametrize("spec,players", [("classic", 2), ("classic", 4), ("layout_kings=to_corner", 3),
                                          ("decks=2", 6)])
def test_features_match_a_plain_recount(spec, players):
    rules = parse_rules(spec)
    seeds = np.arange(1000, 1300, dtype=np.int64)
    dealers = seeds % players
    X = deal_features(seeds, dealers, players, rules)
    assert X.shape == (len(seeds), len(feature_names(players)))
    for i in range(0, len(seeds), 3):
        assert X[i] == pytest.approx(_recount(int(seeds[i]), players, int(dealers[i]), rules)), (spec, i)
    assert X[:, feature_names(players).index("merges")].max() > 0     # the recount saw merges too


def test_expectation_from_unplayed_deals():
    mu, cov = expected_features(3, parse_rules("classic"), 100_000, seed=1)
    se = np.sqrt(np.diag(cov))
    names = feature_names(3)
    exact = {"kings_p0": 7 * 4 / 52, "kings_p2": 7 * 4 / 52, "rank_p1": 7.0, "layout_kings": 16 / 52,
             "stock_kings": 4 * 27 / 52, "soon_kings": 3 * 4 / 52, "layout_rank": 7.0}
    for name, value in exact.items():
        i = names.index(name)
        assert abs(mu[i] - value) < 4 * se[i], name
    assert (se > 0).all() and (se < 0.01).all()
    # a different seed gives different (independent) deals
    mu2, _ = expected_features(3, parse_rules("classic"), 1000, seed=2)
    assert not np.allclose(mu2, expected_features(3, parse_rules("classic"), 1000, seed=1)[0])
