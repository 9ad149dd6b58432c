"""Tests of record checking: valid records replay cleanly, each kind of corruption is caught."""

from __future__ import annotations

import copy
import dataclasses
import json
import random

import pytest

from kc_sim.errors import UserError
from kc_sim.game.cards import PILES, card_text, parse_card
from kc_sim.game.reference import STOP, RefRound
from kc_sim.game.rules import RuleSet, parse_rules
from kc_sim.records.check import (
    action_text,
    check_file,
    check_record,
    load_records,
    parse_action,
)
from kc_sim.testing import round_rule_sets

CLASSIC = parse_rules("classic")


# --- building records with the reference ------------------------------------------------

def record_of(rs: RuleSet, players: int, dealer: int, hands, piles, stock, ref: RefRound, seed=0) -> dict:
    """The game record of a finished reference round that started from hands/piles/stock."""
    assert ref.over
    return {
        "format": "kc-sim/game/1",
        "rules": rs.round_dict(),
        "seed": seed, "match": 0, "round": 0,
        "players": [f"agent{i}" for i in range(players)],
        "dealer": dealer,
        "hands": [[card_text(c) for c in h] for h in hands],
        "table": {PILES[p]: [card_text(c) for c in pile] for p, pile in enumerate(piles) if pile},
        "stock": [card_text(c) for c in stock],
        "turns": [{"seat": t.seat, "drew": None if t.drew is None else card_text(t.drew),
                   "actions": [action_text(a) for a in t.actions]} for t in ref.history],
        "result": {"end": ref.end, "winner": ref.winner, "penalties": list(ref.penalties)},
    }


def random_record(rs: RuleSet, seed: int, stop_chance: float = 0.3) -> dict:
    """Deal with a seeded shuffle, play random legal actions, return the record."""
    rng = random.Random(seed)
    players = rng.randint(2, rs.max_players)
    dealer = rng.randrange(players)
    deck = list(range(52)) * rs.decks
    rng.shuffle(deck)
    # the position right after the layout, before any draw (draw=end draws nothing at turn start)
    dealt = RefRound(dataclasses.replace(rs, draw="end"), players, dealer, deck)
    hands, piles, stock = copy.deepcopy((dealt.hands, dealt.piles, dealt.stock))
    ref = RefRound.from_position(rs, players, dealer, copy.deepcopy(hands), copy.deepcopy(piles), list(stock))
    while not ref.over:
        legal = sorted(ref.legal_actions())
        if STOP in legal and (rng.random() < stop_chance or len(legal) == 1):
            ref.play(STOP)
        else:
            ref.play(rng.choice([a for a in legal if a != STOP]))
    return record_of(rs, players, dealer, hands, piles, stock, ref, seed)


def scripted_record(rs: RuleSet, hands: list[str], table: dict, turns: list[list[str]]) -> dict:
    """Seat 0 plays first (dealer = last seat); the stock is every card not in hands/table, by id.
    Each turn plays its action texts then stops, until the round is over."""
    players = len(hands)
    hand_ids = [[parse_card(t) for t in h.split()] for h in hands]
    piles = [[parse_card(t) for t in table.get(name, "").split()] for name in PILES]
    used = [c for h in hand_ids for c in h] + [c for p in piles for c in p]
    stock = [c for c in range(52) for _ in range(rs.decks - used.count(c))]
    ref = RefRound.from_position(rs, players, players - 1, copy.deepcopy(hand_ids), copy.deepcopy(piles), list(stock))
    for actions in turns:
        for text in actions:
            ref.play(parse_action(text))
        if not ref.over:
            ref.play(STOP)
    while not ref.over:  # finish with stops (draws run the stock down, then the round blocks)
        legal = ref.legal_actions()
        ref.play(STOP if STOP in legal else min(legal))  # must_play_kings: a king to a corner first
    return record_of(rs, players, players - 1, hand_ids, piles, stock, ref)


def simple_record(rs: RuleSet = CLASSIC) -> dict:
    """Seat 0 plays 9H on TS and 3C on 4H in its first turn; later everyone just stops."""
    return scripted_record(rs, ["9H 3C KC 5D 6S 2H 8C", "QH JS 7D 4C AS 2C 3D"],
                           {"N": "TS", "E": "4H", "S": "6C", "W": "JD"},
                           [["9H>N", "3C>E"]])


def write_jsonl(tmp_path, records, name="games.jsonl"):
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def one_problem(rec):
    problems = check_record(rec)
    assert len(problems) == 1, problems
    return problems[0]


# --- action text ----------------------------------------------------------------------

def test_action_text_round_trip_for_every_id():
    for a in range(449):
        assert parse_action(action_text(a)) == a
    assert action_text(parse_card("7H") * 8 + 1) == "7H>E"
    assert action_text(416 + 3 * 8 + 7) == "W>NW"
    assert action_text(448) == "stop"


@pytest.mark.parametrize("text,expected", [
    ("7H>E", parse_card("7H") * 8 + 1), ("KS>NE", parse_card("KS") * 8 + 4),
    ("10d>e", parse_card("TD") * 8 + 1), ("Q♦>NW", parse_card("QD") * 8 + 7),
    ("N>E", 416 + 1), ("W>NW", 416 + 24 + 7), ("STOP", 448),
])
def test_parse_action_accepts(text, expected):
    assert parse_action(text) == expected


@pytest.mark.parametrize("text", ["7H", "7H>X", "ZZ>N", "NE>N", "N>E>S", "", "7H>>E"])
def test_parse_action_refuses(text):
    with pytest.raises(UserError):
        parse_action(text)


def test_action_text_refuses_unknown_ids():
    for a in (-1, 449):
        with pytest.raises(ValueError):
            action_text(a)


# --- valid records ------------------------------------------------------------------------

ALL_RULES = round_rule_sets()   # every combination of the round switches (96)


@pytest.mark.parametrize("rs", ALL_RULES, ids=lambda rs: rs.spec())
def test_random_records_replay_cleanly(rs):
    for seed in range(2):
        assert check_record(random_record(rs, seed)) == []


def test_check_file_counts_records_and_finds_none_wrong(tmp_path):
    recs = [random_record(CLASSIC, s) for s in range(5)] + [simple_record()]
    n, problems = check_file(write_jsonl(tmp_path, recs))
    assert (n, problems) == (6, [])
    assert load_records(tmp_path / "games.jsonl") == recs


def test_simple_record_shape():
    rec = simple_record()
    assert rec["turns"][0] == {"seat": 0, "drew": rec["stock"][0], "actions": ["9H>N", "3C>E"]}
    assert check_record(rec) == []


def test_blocked_and_out_records_are_valid():
    out = scripted_record(CLASSIC, ["3H", "2C 9D"], {"N": "4S"}, [["3H>N"]])
    assert out["result"] == {"end": "out", "winner": 0, "penalties": [0, 2]}
    assert out["turns"] == [{"seat": 0, "drew": None, "actions": ["3H>N"]}]
    assert check_record(out) == []
    blocked = random_record(CLASSIC, 11, stop_chance=1.0)
    assert blocked["result"]["end"] == "blocked" and check_record(blocked) == []


# --- corrupted records: the replay finds the problem -------------------------------------

def test_illegal_action_is_reported_with_legal_actions():
    rec = simple_record()
    rec["turns"][0]["actions"][1] = "3C>S"  # black 3 on black 6
    p = one_problem(rec)
    assert p.turn == 0 and p.action == "3C>S" and "does not fit" in p.message
    assert "3C>E" in p.legal and "stop" in p.legal
    assert "3C>S" in str(p) and "legal:" in str(p)


def test_card_not_in_hand_is_reported():
    rec = simple_record()
    rec["turns"][0]["actions"][0] = "9D>N"
    p = one_problem(rec)
    assert p.turn == 0 and "not in seat 0's hand" in p.message


def test_wrong_drew_is_reported():
    rec = simple_record()
    rec["turns"][1]["drew"] = "AH" if rec["turns"][1]["drew"] != "AH" else "AD"
    p = one_problem(rec)
    assert p.turn == 1 and "drew" in p.message


def test_missing_draw_is_reported():
    rec = simple_record()
    rec["turns"][0]["drew"] = None
    assert "drew null" in one_problem(rec).message


def test_wrong_drew_with_draw_start_is_caught_before_the_actions():
    rec = scripted_record(dataclasses.replace(CLASSIC, draw="start"),
                          ["TD 2S 3S 4S 5S 6S QC", "2C 3C 4C 5C 6C 8C 9C"], {"N": "9S", "E": "7C"},
                          [])
    rec["turns"][0]["drew"] = "KH"
    p = one_problem(rec)
    assert p.turn == 0 and "start of this turn" in p.message


def test_wrong_seat_is_reported():
    rec = simple_record()
    rec["turns"][1]["seat"] = 0
    p = one_problem(rec)
    assert p.turn == 1 and "seat 1's turn" in p.message


def test_wrong_result_end_and_winner():
    rec = scripted_record(CLASSIC, ["3H", "2C 9D"], {"N": "4S"}, [["3H>N"]])
    rec["result"]["winner"] = 1
    p = one_problem(rec)
    assert p.turn is None and "winner 1, expected 0" in p.message
    rec["result"].update(winner=None, end="blocked")
    assert "end 'blocked', expected 'out'" in one_problem(rec).message


def test_wrong_penalties():
    rec = scripted_record(CLASSIC, ["3H", "KC 9D"], {"N": "4S"}, [["3H>N"]])
    assert rec["result"]["penalties"] == [0, 11]
    rec["result"]["penalties"] = [0, 2]
    assert "penalties [0, 2], expected [0, 11]" in one_problem(rec).message
    face = scripted_record(dataclasses.replace(CLASSIC, scoring="face"), ["3H", "KC 9D"], {"N": "4S"}, [["3H>N"]])
    assert face["result"]["penalties"] == [0, 19] and check_record(face) == []


def test_missing_turns_are_reported():
    rec = simple_record()
    del rec["turns"][-1]
    p = one_problem(rec)
    assert "not over" in p.message and p.turn == len(rec["turns"])


def test_extra_turn_after_the_end_is_reported():
    rec = scripted_record(CLASSIC, ["3H", "2C 9D"], {"N": "4S"}, [["3H>N"]])
    rec["turns"].append({"seat": 1, "drew": None, "actions": []})
    p = one_problem(rec)
    assert p.turn == 1 and "already ended" in p.message


def test_action_after_going_out_is_reported():
    rec = scripted_record(CLASSIC, ["3H", "2C 9D"], {"N": "4S"}, [["3H>N"]])
    rec["turns"][0]["actions"].append("N>E")
    assert "after the round ended" in one_problem(rec).message


def test_explicit_stop_inside_actions_is_reported():
    rec = simple_record()
    rec["turns"][0]["actions"].insert(1, "stop")
    p = one_problem(rec)
    assert p.action == "stop" and "ends where the player stopped" in p.message


def test_illegal_stop_with_must_play_kings():
    mpk = dataclasses.replace(CLASSIC, must_play_kings=True)
    rec = scripted_record(mpk, ["9H 3C KC 5D 6S 2H 8C", "QH JS 7D 4C AS 2C 3D"],
                          {"N": "TS", "E": "4H", "S": "6C", "W": "JD"}, [["KC>NE"]])
    assert check_record(rec) == []
    rec["turns"][0]["actions"] = []  # stops while holding KC with empty corners
    p = one_problem(rec)
    assert p.turn == 0 and p.action == "stop" and "must_play_kings" in p.message
    assert "stop" not in p.legal and "KC>NE" in p.legal


def test_missing_and_duplicated_cards_are_reported():
    rec = simple_record()
    rec["stock"].pop()
    assert "missing" in one_problem(rec).message
    rec = simple_record()
    rec["stock"].append(rec["stock"][0])
    assert "too many" in one_problem(rec).message


def test_two_decks_need_every_card_twice():
    two = dataclasses.replace(CLASSIC, decks=2)
    rec = random_record(two, 3)
    assert check_record(rec) == []
    rec["stock"].remove("AC") if "AC" in rec["stock"] else rec["stock"].pop()
    assert "missing" in one_problem(rec).message


def test_bad_player_count_is_a_problem():
    rec = simple_record()
    rec["players"] = ["a", "b", "c", "d", "e"]
    rec["hands"] += [[], [], []]
    assert "player count" in one_problem(rec).message


def test_problem_carries_record_identity_and_check_file_line(tmp_path):
    good, bad = simple_record(), simple_record()
    bad["seed"], bad["round"] = 99, 4
    bad["result"]["penalties"] = [1, 1]
    n, problems = check_file(write_jsonl(tmp_path, [good, bad]))
    assert n == 2 and len(problems) == 1
    p = problems[0]
    assert (p.record, p.seed, p.round, p.line) == (1, 99, 4, 2)
    assert str(p).startswith("record 1 (line 2) seed 99")


# --- malformed files: one-line UserError naming file and line ------------------------------

def test_missing_file(tmp_path):
    with pytest.raises(UserError, match="no such file"):
        load_records(tmp_path / "nope.jsonl")


def test_bad_json_names_file_and_line(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(simple_record()) + "\n{not json\n", encoding="utf-8")
    with pytest.raises(UserError, match=r"bad\.jsonl:2: not JSON") as e:
        load_records(path)
    assert "\n" not in str(e.value)
    with pytest.raises(UserError):
        check_file(path)


@pytest.mark.parametrize("field", ["hands", "turns", "result", "rules", "dealer", "format"])
def test_missing_field(tmp_path, field):
    rec = simple_record()
    del rec[field]
    with pytest.raises(UserError, match=rf"games\.jsonl:1: missing field\(s\) {field}"):
        load_records(write_jsonl(tmp_path, [rec]))


def test_missing_turn_field(tmp_path):
    rec = simple_record()
    del rec["turns"][2]["drew"]
    with pytest.raises(UserError, match=r":1: field turns\[2\]: missing drew"):
        load_records(write_jsonl(tmp_path, [rec]))


@pytest.mark.parametrize("mutate,pattern", [
    (lambda r: r["hands"][0].__setitem__(0, "1H"), r"hands\[0\]\[0\]: bad card '1H'"),
    (lambda r: r["stock"].__setitem__(0, "XX"), r"stock\[0\]: bad card"),
    (lambda r: r["table"].__setitem__("NX", ["2C"]), r"table: bad pile 'NX'"),
    (lambda r: r["turns"][0]["actions"].__setitem__(0, "9H>Q"), r"turns\[0\]\.actions\[0\]: bad action"),
    (lambda r: r["turns"][0].__setitem__("drew", "ZZ"), r"turns\[0\]\.drew"),
    (lambda r: r["rules"].__setitem__("draw", "never"), r"field rules: bad rule value draw"),
    (lambda r: r["result"].__setitem__("end", "won"), r"result\.end"),
    (lambda r: r.__setitem__("format", "kc-sim/game/9"), r"field format"),
])
def test_malformed_text(tmp_path, mutate, pattern):
    rec = simple_record()
    mutate(rec)
    with pytest.raises(UserError, match=pattern):
        load_records(write_jsonl(tmp_path, [simple_record(), rec]))
    # check_record on an in-memory dict reports it as a problem instead
    assert check_record(rec)[0].turn is None


def _stopped_by_a_fault(rec: dict, turns: int, actions: int) -> dict:
    """``rec`` as kc-sim saves a round a fault stopped: the first ``turns`` turns, then the
    first ``actions`` actions of the next (no stop, no draw), result unfinished, a fault field."""
    out = copy.deepcopy(rec)
    last = dict(out["turns"][turns], drew=None, actions=out["turns"][turns]["actions"][:actions])
    out["turns"] = out["turns"][:turns] + [last]
    out["result"] = {"end": "unfinished", "winner": None, "penalties": []}
    out["fault"] = {"agent": "x.py:Spin", "seat": last["seat"], "kind": "stalled", "turn": turns, "action": None,
                    "message": "did not decide within 2 s"}
    return out


def test_a_round_a_fault_stopped_is_checked_as_far_as_it_went(tmp_path):
    rec = simple_record()
    stopped = _stopped_by_a_fault(rec, 0, 1)                  # seat 0 played 9H>N, then stalled
    assert check_record(stopped) == []
    assert check_file(write_jsonl(tmp_path, [stopped])) == (1, [])
    bad = copy.deepcopy(stopped)
    bad["turns"][-1]["actions"].append("KH>N")                # not in seat 0's hand
    assert "illegal" in one_problem(bad).message
    no_fault = {k: v for k, v in stopped.items() if k != "fault"}
    assert "result.end" in one_problem(no_fault).message      # unfinished only with the fault that stopped it
    out = _stopped_by_a_fault(scripted_record(CLASSIC, ["3H", "2C 9D"], {"N": "4S"}, [["3H>N"]]), 0, 1)
    assert "but the round ended (out)" in one_problem(out).message    # seat 0 went out: not unfinished
