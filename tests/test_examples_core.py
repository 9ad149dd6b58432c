"""The worked examples of the rule book, played on the compiled core through the step API.
(The same examples are checked against the reference in test_reference.py.)"""

import pytest

from kc_sim.game.actions import parse_action
from kc_sim.play.game import Game, IllegalActionError


def legal(g):
    return set(g.legal_texts())


def test_1_colours_alternate_suits_need_not_match():
    g = Game.from_position([["QH", "JC", "QS", "5D"], ["2D"]], [["3C"], ["4C"], ["5C"], ["6C"], ["KS"]], ["9D"])
    assert "QH>NE" in legal(g) and "QS>NE" not in legal(g)
    g.play("QH>NE")
    assert "JC>NE" in legal(g)
    g.play("JC>NE")
    assert g.pile(4) == [parse_action("KS>N") // 8, parse_action("QH>N") // 8, parse_action("JC>N") // 8]


def test_2_whole_side_pile_moves_then_freed_side_takes_any_card():
    g = Game.from_position([["4S", "3H", "2D"], ["2C"]], [["8C", "7H"], ["9D"], ["TC"], ["JC"]], ["9S"])
    assert "N>E" in legal(g)
    g.play("N>E")
    assert g.pile(0) == [] and [len(p) for p in g.piles[:2]] == [0, 3]
    g.play("4S>N")
    g.play("3H>N")
    assert g.pile(0) == [parse_action("4S>N") // 8, parse_action("3H>N") // 8]


def test_3_part_of_a_pile_never_moves():
    g = Game.from_position([["2D", "5C"], ["2C"]], [["8C", "7H"], ["8D"], ["TC"], ["JC"]], ["9S"])
    moves_from_n = {t for t in legal(g) if t.startswith("N>")}
    assert moves_from_n == set()          # 8C does not fit 8D, and 7H cannot leave alone
    with pytest.raises(IllegalActionError):
        g.play("N>E")


def test_4_last_card_ends_the_round_without_drawing():
    g = Game.from_position([["3H"], ["2C", "KD"]], [["4S"], ["9D"], ["TC"], ["JC"]], ["9S", "8S"], dealer=1)
    g.play("3H>N")
    assert g.over and g.end == "out" and g.winner == 0
    assert g.stock == [parse_action("9S>N") // 8, parse_action("8S>N") // 8] and g.hand(0) == []
    assert g.penalties == [0, 11]


def test_5_corner_piles_never_move_and_a_king_fits_on_nothing():
    g = Game.from_position([["2D", "5C"], ["2C"]], [["KH"], ["QS"], ["QC"], ["TC"], ["KC"]], ["9S"])
    texts = legal(g)
    assert not any(t.split(">")[0] in ("NE", "SE", "SW", "NW") for t in texts)
    assert "N>E" not in texts and "N>S" not in texts   # king-based side pile onto a queen
    assert "N>SE" in texts                               # but it may go to an empty corner


def test_6_three_cards_in_one_turn():
    g = Game.from_position([["9H", "3C", "KC", "5D"], ["2D"]], [["TS"], ["4H"], ["6C"], ["JD"]], ["5C"])
    for a in ("9H>N", "3C>E", "KC>NE"):
        g.play(a)
    assert g.turn_actions == 3 and g.hand(0) == [parse_action("5D>N") // 8]


def test_7_draw_at_start_then_play_the_drawn_card():
    g = Game.from_position([["TD", "2C"], ["2D"]], [["9S"], ["7C"], ["QC"], ["QD"]], ["8H", "5S"],
                           rules="classic,draw=start", dealer=1)
    assert g.drew == parse_action("8H>N") // 8
    g.play("8H>N")
    g.play("E>N")
    assert g.pile(1) == []
    g.play("TD>E")
    assert [len(p) for p in g.piles[:2]] == [3, 1]


def test_8_an_ace_closes_its_pile_but_the_pile_can_still_move():
    g = Game.from_position([["KD", "2H"], ["2D"]], [["3D", "2S", "AH"], ["4C"], ["QC"], ["QD"]], ["9S"])
    texts = legal(g)
    assert not any(t.endswith(">N") and not t.startswith(("E", "S", "W")) for t in texts)
    assert "N>E" in texts                  # 3D on 4C


def test_9_penalties_and_a_blocked_round_scores_every_hand():
    g = Game.from_position([["KS", "QD", "2C"], ["5H", "KH"]], [["AC"], ["AD"], ["AH"], ["AS"]], [])
    g.play("stop")
    g.play("stop")
    assert g.over and g.end == "blocked" and g.winner is None
    assert g.penalties == [12, 11]
    face = Game.from_position([["KS", "QD", "2C"], ["5H", "AH"]], [["AC"], ["AD"], ["AH"], ["AS"]], [],
                              rules="classic,scoring=face")
    face.play("stop")
    face.play("stop")
    assert face.penalties == [22, 6]
