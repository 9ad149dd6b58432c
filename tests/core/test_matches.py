"""Matches: penalties add up over rounds, the deal passes left, and the match switch
decides when it ends and who wins."""

import numpy as np
import pytest

from kc_sim.core import loop
from kc_sim.core.policy import random_policy
from kc_sim.game.rules import parse_rules

POLICIES = (random_policy,) * 8


def play(rules_text, players, n_matches=200):
    rules = parse_rules(rules_text)
    seeds = np.arange(100, 100 + n_matches, dtype=np.int64)
    rows = np.zeros((n_matches * 60, loop.ROUND_COLS), dtype=np.int64)
    matches = np.zeros((n_matches, loop.MATCH_COLS), dtype=np.int64)
    n = loop.play_matches(seeds, players, rules.codes(), rules.match_code, rules.match_rounds,
                          POLICIES, rows, matches, 0)
    assert n > 0
    return rows[:n], matches


def by_match(rows):
    for m in np.unique(rows[:, loop.C_MATCH]):
        yield m, rows[rows[:, loop.C_MATCH] == m]


def winners_mask(totals, pool):
    best = min(totals[s] for s in pool)
    return sum(1 << s for s in pool if totals[s] == best)


@pytest.mark.parametrize("players", [2, 3, 4])
def test_to_25(players):
    rows, matches = play("classic", players)
    for m, rs in by_match(rows):
        pen = rs[:, loop.C_PENALTY:loop.C_PENALTY + players]
        totals = pen.sum(axis=0)
        assert (totals == matches[m, loop.M_TOTAL:loop.M_TOTAL + players]).all()
        assert totals.max() >= 25 and (pen[:-1].sum(axis=0).max() < 25)
        assert list(rs[:, loop.C_MATCH_ROUND]) == list(range(len(rs)))
        dealers = rs[:, loop.C_DEALER]
        assert all((dealers[i + 1] - dealers[i]) % players == 1 for i in range(len(rs) - 1)), "deal passes left"
        assert (rs[:, loop.C_FIRST] == (dealers + 1) % players).all()
        assert matches[m, loop.M_WINNERS] == winners_mask(totals, range(players))


def test_rounds_n():
    rows, matches = play("classic,match=rounds:3", 3)
    assert (matches[:, loop.M_ROUNDS] == 3).all() and len(rows) == 3 * len(matches)


def test_eliminate_25():
    players = 4
    rows, matches = play("classic,match=eliminate_25", players)
    for m, rs in by_match(rows):
        totals = np.zeros(players, dtype=np.int64)
        active = set(range(players))
        for r in rs:
            in_round = {s for s in range(players) if r[loop.C_PENALTY + s] >= 0}
            assert in_round == active, "eliminated players sit out"
            for s in in_round:
                totals[s] += r[loop.C_PENALTY + s]
            last = set(active)
            active = {s for s in active if totals[s] < 25}
        assert len(active) <= 1
        expect = winners_mask(totals, active) if active else winners_mask(totals, last)
        assert matches[m, loop.M_WINNERS] == expect


def test_matches_are_reproducible():
    a, b = play("classic", 3, 20), play("classic", 3, 20)
    assert (a[0] == b[0]).all() and (a[1] == b[1]).all()
