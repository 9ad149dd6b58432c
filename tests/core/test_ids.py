"""The action ids, pile kinds, rule variants and the match bound have one home each:
the compiled helpers agree with the game layer's functions on every id, the core's
constants are the game's, and the rule names follow the enums' numbers."""

import numpy as np
import pytest

from kc_sim.core import ids, loop
from kc_sim.core import layout as L
from kc_sim.core.match import max_match_rounds
from kc_sim.core.policy import random_policy
from kc_sim.game import actions as A
from kc_sim.game import rules as R
from kc_sim.game import variants as V
from kc_sim.game.cards import CORNERS, N_CARDS, PILES, SIDES


def test_id_table():
    assert (L.MOVE_BASE, L.STOP, L.N_ACTIONS) == (A.MOVE_BASE, A.STOP, A.N_ACTIONS) == (416, 448, 449)
    assert list(SIDES) == [0, 1, 2, 3] and list(CORNERS) == [4, 5, 6, 7]
    assert [PILES[p] for p in SIDES] == ["N", "E", "S", "W"]
    assert [PILES[p] for p in CORNERS] == ["NE", "SE", "SW", "NW"]


def test_compiled_ids_match_the_game_layer_on_every_id():
    seen = set()
    for c in range(N_CARDS):
        for p in range(L.N_PILES):
            a = ids.place_id(c, p)
            assert a == A.place_id(c, p) == c * 8 + p
            assert (ids.id_card(a), ids.id_pile(a)) == (c, p)
            assert ids.is_place(a) and not ids.is_move(a)
            assert A.parse_action(A.action_text(a)) == a
            seen.add(a)
    for s in SIDES:
        for p in range(L.N_PILES):
            a = ids.move_id(s, p)
            assert a == A.move_id(s, p) == 416 + s * 8 + p
            assert (ids.id_side(a), ids.id_pile(a)) == (s, p)
            assert ids.is_move(a) and not ids.is_place(a)
            assert A.parse_action(A.action_text(a)) == a
            seen.add(a)
    assert not ids.is_move(L.STOP) and not ids.is_place(L.STOP)
    assert seen | {L.STOP} == set(range(L.N_ACTIONS))


def test_pile_kinds():
    assert [bool(ids.is_side(p)) for p in range(8)] == [True] * 4 + [False] * 4
    assert [bool(ids.is_corner(p)) for p in range(8)] == [p in CORNERS for p in range(8)]


@pytest.mark.parametrize("enum, table", [(V.Draw, R.DRAW), (V.LayoutKings, R.LAYOUT_KINGS),
                                         (V.Scoring, R.SCORING), (V.MatchKind, R.MATCH_KIND_NAMES)])
def test_rule_names_follow_the_enum_numbers(enum, table):
    assert table == tuple(m.name.lower() for m in sorted(enum))
    for m in enum:
        assert table[m] == m.name.lower()


def test_rule_codes_use_the_enum_numbers():
    r = R.parse_rules("draw=if_stuck,layout_kings=to_corner,scoring=face,decks=2")
    codes = r.codes()
    assert codes[V.R_DRAW] == V.Draw.IF_STUCK and codes[V.R_LAYOUT_KINGS] == V.LayoutKings.TO_CORNER
    assert codes[V.R_SCORING] == V.Scoring.FACE and codes[V.R_DECKS] == 2
    assert R.R_DRAW is V.R_DRAW and R.N_RULE_CODES == V.N_RULE_CODES == len(codes)
    assert L.FIRST == L.RULES + V.N_RULE_CODES
    assert [R.parse_rules(f"match={m}").match_code for m in ("to_25", "rounds:4", "eliminate_25")] == list(V.MatchKind)
    assert str(V.MATCH_TARGET) in R.MATCH_HELP


def test_max_match_rounds_values():
    assert max_match_rounds(V.MatchKind.ROUNDS, 3, 7) == 7
    assert max_match_rounds(V.MatchKind.TO_25, 2) == 24 * 2 // 1 + 1
    assert max_match_rounds(V.MatchKind.TO_25, 4) == 24 * 4 // 3 + 1
    assert max_match_rounds(V.MatchKind.ELIMINATE_25, 4) == 25 * 4 + 1


@pytest.mark.parametrize("match, players", [("to_25", 2), ("to_25", 4), ("eliminate_25", 2), ("eliminate_25", 3)])
def test_max_match_rounds_bounds_real_matches(match, players):
    rules = R.parse_rules(f"match={match}")
    bound = max_match_rounds(rules.match_code, players, rules.match_rounds)
    n_matches = 100
    seeds = np.arange(7, 7 + n_matches, dtype=np.int64)
    rows = np.zeros((n_matches * bound, loop.ROUND_COLS), dtype=np.int64)
    matches = np.zeros((n_matches, loop.MATCH_COLS), dtype=np.int64)
    n = loop.play_matches(seeds, players, rules.codes(), int(rules.match_code), rules.match_rounds,
                          (random_policy,) * 8, rows, matches, 0)
    assert n > 0
    assert matches[:, loop.M_ROUNDS].max() <= bound
    assert matches[:, loop.M_ROUNDS].min() >= 1
