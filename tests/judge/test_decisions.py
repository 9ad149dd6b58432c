"""The judge's decisions: a candidate that goes out is worth a certain win, forced decisions
lose nothing, two seeds agree within their intervals, hindsight sees the real cards."""

from __future__ import annotations

import math

import numpy as np
import pytest

from kc_sim.core import layout as L
from kc_sim.game.actions import parse_action
from kc_sim.game.cards import parse_card
from kc_sim.judge.analyse import analyse_file, evaluator_policy
from kc_sim.judge.decisions import cross_fitted_loss, judge_decision, label_of
from kc_sim.judge.positions import Decision, read_checked, replay
from kc_sim.play.recording.command import record_rounds
from kc_sim.game.rules import parse_rules
from kc_sim.play.table.game import Game

_, GREEDY = evaluator_policy("greedy")


def _going_out_position() -> Game:
    """Seat 0 holds only 5H, which fits on the black 6 at N: placing it wins the round. Seat 1
    holds one card and the stock the rest (every card somewhere): after a stop, seat 1 goes out
    whenever its card fits."""
    table = {"N": ["6S"], "E": ["QD"], "S": ["9D"], "W": ["2C"]}
    mine = ["5H"]
    theirs = ["8H"]
    used = {parse_card(c) for c in mine + theirs + [c for p in table.values() for c in p]}
    stock = [c for c in range(52) if c not in used]
    piles = [table.get(name, []) for name in ("N", "E", "S", "W", "NE", "SE", "SW", "NW")]
    return Game.mid_turn([mine, theirs], piles, stock, seat=0)


def test_a_candidate_that_goes_out_is_a_certain_win():
    g = _going_out_position()
    legal = g.legal_actions()
    out = parse_action("5H>N")
    assert out in legal and L.STOP in legal
    dec = Decision(0, 0, 0, g.state.copy(), legal, L.STOP)
    j = judge_decision(dec, GREEDY, seed=1, budget=64)
    win = {c["action"]: c["win"] for c in j.candidates}
    assert j.best == out and win[out] == 100.0
    assert all(w < 100.0 for a, w in win.items() if a != out)
    assert j.loss > 0 and j.loss_lo > 0                 # stopping there is told apart from going out
    # played, it loses nothing
    k = judge_decision(Decision(0, 0, 0, g.state.copy(), legal, out), GREEDY, seed=1, budget=64)
    assert k.loss == 0 and k.label == ""


def test_hindsight_sees_the_real_cards():
    g = _going_out_position()
    dec = Decision(0, 0, 0, g.state.copy(), g.legal_actions(), L.STOP)
    j = judge_decision(dec, GREEDY, seed=1, budget=64, hindsight=True)
    assert {c["action"]: c["win"] for c in j.candidates}[parse_action("5H>N")] == 100.0
    # one real world and a policy without randomness: every world plays the same
    assert j.worlds == 32 and j.settled


@pytest.fixture(scope="module")
def rounds(tmp_path_factory):
    path = tmp_path_factory.mktemp("judge") / "g.jsonl"
    record_rounds(path, ["greedy", "random"], 2, 5, parse_rules("classic"))
    return path, [replay(i, n, rec) for i, n, rec in read_checked(path)]


def test_forced_decisions_lose_nothing(rounds):
    _, replayed = rounds
    forced = [d for r in replayed for d in r.decisions if d.forced]
    assert forced
    for d in forced[:5]:
        j = judge_decision(d, GREEDY, seed=3, budget=64)
        assert j.loss == 0 and j.worlds == 0 and j.label == "" and len(j.candidates) == 1


def test_two_seeds_agree_within_their_intervals(rounds):
    _, replayed = rounds
    free = [d for r in replayed for d in r.decisions if len(d.legal) >= 3]
    d = free[len(free) // 2]
    a = judge_decision(d, GREEDY, seed=11, budget=256, batch=256)
    b = judge_decision(d, GREEDY, seed=12, budget=256, batch=256)
    assert a.worlds == b.worlds == 256
    assert a.loss_lo <= b.loss_hi and b.loss_lo <= a.loss_hi
    for ca, cb in zip(a.candidates, b.candidates):
        p = (ca["win"] + cb["win"]) / 200
        se = math.sqrt(max(p * (1 - p), 1e-4) * 2 / 256) * 100
        assert abs(ca["win"] - cb["win"]) <= 4 * se, (ca, cb)
    # the same seed: the same figures
    c = judge_decision(d, GREEDY, seed=11, budget=256, batch=64)
    assert [x["win"] for x in c.candidates[:]] == [x["win"] for x in a.candidates] or c.worlds < 256


def test_the_analysis_judges_every_decision_of_the_chosen_seats(rounds):
    path, replayed = rounds
    rep = analyse_file(path, rounds=[1], seats=[1], evaluator="greedy", budget=32)
    (rnd,) = rep["rounds"]
    mine = [d for d in replayed[1].decisions if d.seat == 1]
    assert [x["decision"] for x in rnd["decisions"]] == [d.index for d in mine]
    s = rnd["seats"]["1"]
    assert s["decisions"] == len(mine) and s["forced"] == sum(d.forced for d in mine)
    assert all(x["loss"] == 0 for x in rnd["decisions"] if x["forced"])
    split = s["split"]
    assert split["result"] == (100.0 if replayed[1].winner == 1 else 0.0)
    assert math.isclose(split["expectation"] + split["luck"] + split["decisions"] + split["rest"], split["result"],
                        abs_tol=0.01)
    assert rep["evaluator"] == "greedy" and rep["view"] == "seat"


def test_labels_and_cross_fitting():
    assert label_of(20, 1) == "blunder" and label_of(7, 0.5) == "mistake" and label_of(3, 0.1) == "inaccuracy"
    assert label_of(2.9, 0.5) == "" and label_of(30, 0) == ""
    # two equal candidates: noise alone makes no loss on average once the best is picked on other worlds
    rng = np.random.default_rng(0)
    losses = [cross_fitted_loss(rng.integers(0, 2, (64, 4)).astype(float), 0)[0] for _ in range(200)]
    assert abs(np.mean(losses)) < 2.0


def test_three_seats_two_decks_draw_first_and_a_round_stopped_early(tmp_path):
    """Draws at the turn's opening, two copies of a card, three seats: every draw judged, the
    split adds up; a round quit half-way is judged as far as it went, without a split."""
    import json

    path = tmp_path / "v.jsonl"
    record_rounds(path, ["greedy", "random", "merger"], 1, 3, parse_rules("draw_first,decks=2"))
    rep = analyse_file(path, evaluator="greedy", budget=16)
    (rnd,) = rep["rounds"]
    (r,) = [replay(i, n, rec) for i, n, rec in read_checked(path)]
    assert len(rnd["luck"]["draws"]) == len(r.draws) > 0
    assert all(abs(d["luck"] - (d["after"] - d["before"])) < 0.01 for d in rnd["luck"]["draws"])
    for s in "012":
        sp = rnd["seats"][s]["split"]
        assert abs(sp["expectation"] + sp["luck"] + sp["decisions"] + sp["rest"] - sp["result"]) < 0.01
    rec = json.loads(path.read_text().splitlines()[0])
    rec["turns"] = rec["turns"][:4]
    rec["result"] = {"end": "unfinished", "winner": None, "penalties": [0, 0, 0]}
    quit_ = tmp_path / "quit.jsonl"
    quit_.write_text(json.dumps(rec) + "\n")
    rep = analyse_file(quit_, evaluator="greedy", budget=16)
    (rnd,) = rep["rounds"]
    assert rnd["end"] == "unfinished" and rnd["decisions"]
    assert all("split" not in v for v in rnd["seats"].values())


def test_the_judge_reads_only_what_the_seat_saw(rounds):
    """Permuting the cards the seat could not see (other hands, the stock) changes nothing."""
    from kc_sim.testing import permute_hidden

    _, replayed = rounds
    rng = np.random.default_rng(3)
    free = [d for r in replayed for d in r.decisions if len(d.legal) >= 2][:4]
    for d in free:
        a = judge_decision(d, GREEDY, seed=5, budget=64)
        hidden = Decision(d.index, d.turn, d.seat, permute_hidden(d.state, d.seat, rng), d.legal, d.chosen)
        b = judge_decision(hidden, GREEDY, seed=5, budget=64)
        assert a.as_dict() == b.as_dict()


def test_the_drawn_card_put_back_is_a_uniform_deal_one_swap_away(rounds):
    """The world of a draw's "before" value: every card still once somewhere, the seat's drawn
    card replaced by each unseen card (or kept) about equally often, the rest of the deal as in
    the world of the "after" value but for that one swap."""
    from collections import Counter

    from kc_sim.core.worlds import deal_world, unseen_cards, visible_copy
    from kc_sim.judge.rollouts import _swap_redraw

    _, replayed = rounds
    dr = replayed[0].draws[3]
    st, seat = dr.state, dr.seat
    vis = np.empty(L.STATE_SIZE, np.int64)
    visible_copy(st, seat, vis)
    cards = np.empty(104, np.int64)
    rng = np.zeros(1, np.int64)
    got = Counter()

    def where(w):
        out = {}
        for s in range(int(w[L.PLAYERS])):
            for c in range(52):
                if int(w[L.HAND + 2 * s]) >> c & 1:
                    out[c] = ("hand", s)
        for i in range(int(w[L.STOCK_POS]), int(w[L.STOCK_LEN])):
            out[int(w[L.STOCK + i])] = ("stock", i)
        return out

    trials = 3000
    for j in range(trials):
        rng[0] = j + 1
        n = unseen_cards(st, seat, cards)
        a = np.empty(L.STATE_SIZE, np.int64)
        deal_world(vis, st, seat, cards, n, rng, a)
        b = a.copy()
        _swap_redraw(b, st, seat, dr.card, cards, n, rng)
        wa, wb = where(a), where(b)
        assert set(wa) == set(wb) and wa[dr.card] == ("hand", seat)
        moved = [c for c in wa if wa[c] != wb[c]]
        assert len(moved) in (0, 2)
        mine = [c for c in wb if wb[c] == ("hand", seat) and wa[c] != ("hand", seat)]
        got[mine[0] if mine else dr.card] += 1
    assert len(got) == n + 1                       # every unseen card, and the card itself
    expected = trials / (n + 1)
    assert all(abs(k - expected) < 5 * math.sqrt(expected) for k in got.values())
