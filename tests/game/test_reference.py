"""Tests of the reference rules engine: each rule and each variant on small positions.
(The rule book's worked examples run on both engines in test_worked_examples.py.)"""

from __future__ import annotations

import dataclasses
import random

import pytest

from kc_sim.errors import UserError
from kc_sim.game.cards import PILES, parse_card, parse_pile
from kc_sim.game.reference import STOP, IllegalAction, RefRound
from kc_sim.game.rules import RuleSet, parse_rules
from kc_sim.testing import round_rule_sets

CLASSIC = parse_rules("classic")


def cards(text: str) -> list[int]:
    """'7H TD KS' -> card ids."""
    return [parse_card(t) for t in text.split()]


def place(card: str, pile: str) -> int:
    return parse_card(card) * 8 + parse_pile(pile)


def move(side: str, pile: str) -> int:
    return 416 + parse_pile(side) * 8 + parse_pile(pile)


def position(rules=CLASSIC, hands=("", ""), stock="", dealer=None, **table) -> RefRound:
    """A round from hand-built hands/table/stock; seat 0 plays first unless a dealer is given."""
    players = len(hands)
    piles = [cards(table.get(name, "")) for name in PILES]
    if dealer is None:
        dealer = players - 1
    return RefRound.from_position(rules, players, dealer, [cards(h) for h in hands], piles, cards(stock))


def rules(**kw) -> RuleSet:
    return dataclasses.replace(CLASSIC, **kw)


# --- placement -------------------------------------------------------------------------

def test_empty_corner_takes_only_kings():
    r = position(hands=("KH QS 5C", "2C"), N="9D")
    legal = r.legal_actions()
    for corner in ("NE", "SE", "SW", "NW"):
        assert place("KH", corner) in legal
        assert place("QS", corner) not in legal
        assert place("5C", corner) not in legal


def test_empty_side_takes_anything():
    r = position(hands=("KH QS 5C", "2C"), N="9D")
    for side in ("E", "S", "W"):
        for c in ("KH", "QS", "5C"):
            assert place(c, side) in r.legal_actions()


def test_empty_side_takes_no_king_when_switched_off():
    r = position(rules(king_on_empty_side=False), hands=("KH QS", "2C"), N="9D")
    legal = r.legal_actions()
    assert place("KH", "E") not in legal and place("QS", "E") in legal
    assert place("KH", "NE") in legal
    with pytest.raises(IllegalAction, match="takes no king"):
        r.play(place("KH", "E"))


def test_card_not_in_hand_and_bad_fit_are_illegal():
    r = position(hands=("5C", "2C"), N="6S")
    with pytest.raises(IllegalAction, match="not in"):
        r.play(place("5H", "N"))
    with pytest.raises(IllegalAction, match="does not fit"):
        r.play(place("5C", "N"))  # black on black


# --- pile moves ------------------------------------------------------------------------

def test_pile_never_moves_onto_empty_side():
    r = position(hands=("5C", "2C"), N="8C")
    assert not any(416 <= a < 448 for a in r.legal_actions())
    with pytest.raises(IllegalAction, match="empty side"):
        r.play(move("N", "E"))


def test_king_side_pile_moves_to_empty_corner_and_frees_side():
    r = position(hands=("5C", "2C"), N="KH QS", E="3D")
    assert {move("N", c) for c in ("NE", "SE", "SW", "NW")} <= r.legal_actions()
    assert move("E", "NE") not in r.legal_actions()  # only a king-based pile goes to an empty corner
    r.play(move("N", "SW"))
    assert r.piles[parse_pile("SW")] == cards("KH QS") and r.piles[parse_pile("N")] == []


def test_pile_moves_onto_corner_pile_and_not_onto_itself():
    r = position(hands=("5C", "2C"), N="JH", NE="KS QD")
    legal = r.legal_actions()
    assert move("N", "NE") not in legal  # red on red
    r = position(hands=("5C", "2C"), N="JS TD", NE="KS QD")
    assert move("N", "NE") in r.legal_actions()
    assert move("N", "N") not in r.legal_actions()
    with pytest.raises(IllegalAction, match="itself"):
        r.play(move("N", "N"))


def test_corner_piles_never_move():
    # a king-based corner pile would "fit" an empty corner, but corners never move
    r = position(hands=("5C", "2C"), NE="KS QH", N="9D")
    assert not r.can_move_pile(4, 5) and not r.can_move_pile(4, 1)
    assert not any(416 <= a < 448 for a in r.legal_actions())  # move ids start from sides only


# --- stop, must_play_kings --------------------------------------------------------------

def test_stop_always_legal_in_classic():
    r = position(hands=("KH 5C", "2C"), N="6D")
    assert STOP in r.legal_actions()


def test_must_play_kings_forbids_stop():
    r = position(rules(must_play_kings=True), hands=("KH 5C", "2C"), N="6D")
    assert STOP not in r.legal_actions()
    with pytest.raises(IllegalAction, match="must_play_kings"):
        r.play(STOP)
    r.play(place("KH", "NE"))
    assert STOP in r.legal_actions()
    r.play(STOP)
    assert r.seat == 1


def test_must_play_kings_allows_stop_when_no_corner_is_empty():
    r = position(rules(must_play_kings=True, decks=2), hands=("KH 5C", "2C"),
                 NE="KS", SE="KD", SW="KC", NW="KH")
    assert STOP in r.legal_actions()


# --- draw variants ---------------------------------------------------------------------

def test_draw_end_draws_after_stop():
    r = position(hands=("5C", "2C"), N="9D", stock="7S 8S")
    assert r.drew is None and r.hands[0] == cards("5C")
    r.play(STOP)
    assert r.hands[0] == sorted(cards("5C 7S")) and r.stock == cards("8S")
    assert r.history[-1].drew == parse_card("7S") and r.seat == 1 and r.drew is None


def test_draw_end_with_empty_stock_draws_nothing():
    r = position(hands=("5C", "2C"), N="9D")
    r.play(STOP)
    assert r.hands[0] == cards("5C") and r.history[-1].drew is None and not r.over


def test_draw_start_draws_before_acting():
    r = position(rules(draw="start"), hands=("5C", "2C"), N="9D", stock="7S 8S")
    assert r.drew == parse_card("7S") and r.hands[0] == sorted(cards("5C 7S"))
    r.play(STOP)
    assert r.seat == 1 and r.drew == parse_card("8S") and r.hands[0] == sorted(cards("5C 7S"))
    r.play(STOP)
    assert r.drew is None and r.turns == 3  # stock empty


def test_draw_if_stuck_draws_only_without_place_or_move():
    # every side is filled, so only fits count: seat 0 can put 8C on 9D (no draw),
    # seat 1 holds 2C, which fits nowhere (draws)
    full = dict(N="9D", E="9H", S="4C", W="4S")
    r = position(rules(draw="if_stuck"), hands=("8C", "2C"), stock="7S 8S", **full)
    assert r.drew is None and r.hands[0] == cards("8C")
    r.play(STOP)
    assert r.seat == 1 and r.drew == parse_card("7S")
    assert r.hands[1] == sorted(cards("2C 7S"))


def test_draw_if_stuck_with_empty_stock_draws_nothing():
    full = dict(N="9D", E="9H", S="4C", W="4S")
    r = position(rules(draw="if_stuck"), hands=("2C", "2D"), **full)
    assert r.drew is None and r.legal_actions() == {STOP}


def test_draw_if_stuck_king_and_empty_corner_is_not_stuck():
    full = dict(N="9D", E="9H", S="4C", W="4S")
    r = position(rules(draw="if_stuck", must_play_kings=True), hands=("KC", "2D"), stock="5H", **full)
    assert r.drew is None and r.legal_actions() == {place("KC", c) for c in ("NE", "SE", "SW", "NW")}


# --- end of round ----------------------------------------------------------------------

def test_blocked_needs_players_consecutive_idle_turns():
    r = position(hands=("5C 2S", "2C", "3C"), N="6D", E="QH", S="QS", W="QC")
    r.play(STOP)
    r.play(STOP)
    assert not r.over
    r.play(STOP)
    assert r.over and r.end == "blocked" and r.seat == 2 and r.penalties == [2, 1, 1]
    assert [t.seat for t in r.history] == [0, 1, 2]


def test_an_action_resets_the_idle_count():
    r = position(hands=("5C 2S", "2C 7D", "3C"), N="6D", E="QH", S="QS", W="QC")
    r.play(place("5C", "N"))
    r.play(STOP)
    r.play(STOP)  # idle 1
    r.play(STOP)  # idle 2
    assert not r.over
    r.play(STOP)  # seat 0 again: idle 3
    assert r.over and r.end == "blocked"


def test_drawing_is_not_idle():
    r = position(hands=("2S", "2C"), N="6D", E="QH", S="QS", W="QC", stock="3D")
    r.play(STOP)  # draws 3D: not idle
    r.play(STOP)
    assert not r.over
    r.play(STOP)
    assert r.over and r.end == "blocked"


def test_if_stuck_idle_turns_with_stock_left_block_the_round():
    """The project's fixed reading: idle = no action and no draw. With draw=if_stuck a player
    who could act but stops draws nothing, so the round can block with cards in the stock."""
    r = position(rules(draw="if_stuck"), hands=("5C", "5S"), N="6D", E="6H", S="QS", W="QC", stock="2D")
    r.play(STOP)
    r.play(STOP)
    assert r.over and r.end == "blocked" and r.stock == cards("2D")


def test_play_after_round_over_is_illegal():
    r = position(hands=("3H", "2C"), N="4S")
    r.play(place("3H", "N"))
    with pytest.raises(IllegalAction, match="over"):
        r.play(STOP)


# --- scoring ---------------------------------------------------------------------------

def test_scoring_kings10():
    r = position(hands=("KS KH QD JC TD 9S AC", "2C"), N="4S")
    assert r.penalty_of(0) == 10 + 10 + 1 + 1 + 1 + 1 + 1


def test_scoring_face():
    r = position(rules(scoring="face"), hands=("KS QD JC TD 9S 2H AC", "2C"), N="4S")
    assert r.penalty_of(0) == 10 + 10 + 10 + 10 + 9 + 2 + 1
    r.play(STOP)
    r.play(place("2C", "E"))
    assert r.penalties == [52, 0]


# --- deal, layout, turn order ------------------------------------------------------------

def test_deal_layout_and_first_turn():
    deck = list(range(52))
    r = RefRound(CLASSIC, 3, 1, deck)
    # deck[i] for i < 21 goes to seat (1 + 1 + i) % 3
    assert r.hands[2] == sorted(deck[0:21:3]) and r.hands[0] == sorted(deck[1:21:3])
    assert r.hands[1] == sorted(deck[2:21:3])
    assert [r.piles[p] for p in range(4)] == [[21], [22], [23], [24]]
    assert all(r.piles[p] == [] for p in range(4, 8))
    assert r.stock == deck[25:]
    assert r.seat == 2 and r.turns == 1


def test_four_players_leave_twenty_in_stock():
    r = RefRound(CLASSIC, 4, 3, list(range(52)))
    assert [len(h) for h in r.hands] == [7] * 4 and len(r.stock) == 20 and r.seat == 0


def test_layout_kings_stay():
    deck = cards("2C 3C 4C 5C 6C 7C 8C 9C TC JC QC 2D 3D 4D") + cards("KS 5D KH 6D")
    rest = [c for c in range(52) if c not in deck]
    r = RefRound(CLASSIC, 2, 0, deck + rest)
    assert r.piles[:4] == [cards("KS"), cards("5D"), cards("KH"), cards("6D")]
    assert move("N", "NE") in r.legal_actions()  # a king on a side may go to a corner on turn 1


def test_layout_kings_to_corner():
    deck = cards("2C 3C 4C 5C 6C 7C 8C 9C TC JC QC 2D 3D 4D") + cards("KS KH 5D 6D KD 7D 8D")
    rest = [c for c in range(52) if c not in deck]
    r = RefRound(rules(layout_kings="to_corner"), 2, 0, deck + rest)
    # N: KS -> NE, KH -> SE, 5D stays; E: 6D; S: KD -> SW, 7D; W: 8D
    assert r.piles == [cards("5D"), cards("6D"), cards("7D"), cards("8D"),
                       cards("KS"), cards("KH"), cards("KD"), []]
    assert r.stock == rest


def test_draw_start_first_player_has_drawn_in_constructor():
    deck = list(range(52))
    r = RefRound(rules(draw="start"), 2, 0, deck)
    assert len(r.hands[1]) == 8 and r.drew == deck[18] and r.stock == deck[19:]


def test_from_position_matches_constructor():
    rng = random.Random(7)
    deck = list(range(52))
    rng.shuffle(deck)
    a = RefRound(CLASSIC, 3, 2, deck)
    b = RefRound.from_position(CLASSIC, 3, 2, a.hands, a.piles, a.stock)
    assert (a.hands, a.piles, a.stock, a.seat) == (b.hands, b.piles, b.stock, b.seat)


def test_bad_deck_and_player_count_are_refused():
    with pytest.raises(UserError):
        RefRound(CLASSIC, 2, 0, list(range(51)))
    with pytest.raises(UserError):
        RefRound(CLASSIC, 5, 0, list(range(52)))
    with pytest.raises(UserError):
        RefRound(CLASSIC, 2, 0, list(range(52)) * 2)


# --- two decks -------------------------------------------------------------------------

def test_two_decks_duplicates_in_hand_and_table():
    two = rules(decks=2)
    r = position(two, hands=("7H 7H 5C", "2C"), N="8S", E="8C")
    assert r.hands[0] == cards("5C 7H 7H")
    r.play(place("7H", "N"))
    assert r.hands[0] == cards("5C 7H")
    assert place("7H", "E") in r.legal_actions()
    r.play(place("7H", "E"))
    assert r.hands[0] == cards("5C")


def test_two_decks_eight_players_deal_and_king_stays_when_corners_full():
    two = rules(decks=2, layout_kings="to_corner")
    dealt = [c for c in range(52) if c % 13 != 12][:48] + [c for c in range(52) if c % 13 != 12][:8]
    kings = cards("KC KD KH KS")
    layout = kings + kings[:1] + cards("9S")  # N: KC KD KH KS fill the corners, then KC stays on N
    used = dealt + layout
    rest = []
    for c in range(52):
        rest += [c] * (2 - used.count(c))
    r = RefRound(two, 8, 0, used + rest)
    assert [len(h) for h in r.hands] == [7] * 8
    assert r.piles[4:] == [[k] for k in kings]
    assert r.piles[0] == cards("KC") and r.piles[1] == cards("9S")
    with pytest.raises(UserError):
        RefRound(rules(decks=2), 9, 0, used + rest)


# --- random playouts: invariants over every rule combination ------------------------------

ALL_RULES = round_rule_sets()   # every combination of the round switches (96)


def random_round(rs: RuleSet, seed: int, stop_chance: float = 0.3) -> RefRound:
    rng = random.Random(seed)
    players = rng.randint(2, rs.max_players)
    deck = list(range(52)) * rs.decks
    rng.shuffle(deck)
    r = RefRound(rs, players, rng.randrange(players), deck)
    total = sorted(deck)
    while not r.over:
        legal = sorted(r.legal_actions())
        assert legal, "a live round always has a legal action"
        if STOP in legal and (rng.random() < stop_chance or len(legal) == 1):
            a = STOP
        else:
            a = rng.choice([x for x in legal if x != STOP])
        r.play(a)
        held = sorted([c for h in r.hands for c in h] + [c for p in r.piles for c in p] + r.stock)
        assert held == total
        assert r.turns < 5000
    return r


@pytest.mark.parametrize("rs", ALL_RULES, ids=lambda rs: rs.spec())
def test_random_rounds_keep_cards_and_end(rs):
    for seed in range(3):
        r = random_round(rs, seed)
        assert r.end in ("out", "blocked")
        assert (r.winner is None) == (r.end == "blocked")
        assert r.penalties == [r.penalty_of(s) for s in range(r.players)]
        if r.winner is not None:
            assert r.penalties[r.winner] == 0 and r.hands[r.winner] == []
        for pile in r.piles[4:]:
            assert not pile or pile[0] % 13 == 12  # corners are king-based
