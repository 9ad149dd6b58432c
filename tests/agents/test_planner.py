"""The planner: finds multi-step lines (pile moves that free a side, going out), keeps its
plan in memory and replays it, never plays an illegal action under any variant, is
deterministic, and clearly beats greedy on duplicate deals."""

from __future__ import annotations

import numpy as np
import pytest

from agents.planner import planner_policy
from agents.plans import M_LEN, M_TURN, MAX_PLAN
from agents.search import (
    DEFAULT_WEIGHTS,
    evaluate,
    pack_piles,
    pile_get,
    pile_set,
    turn_search,
)
from kc_sim.core import layout as L
from kc_sim.core import loop
from kc_sim.core.layout import STOP
from kc_sim.core.legal import is_legal
from kc_sim.core.policy import MEM_SIZE, random_policy
from kc_sim.core.step import apply, deal
from kc_sim.game.actions import action_text
from kc_sim.game.cards import parse_card
from kc_sim.game.rules import DRAW, LAYOUT_KINGS, SCORING, parse_rules
from kc_sim.play.agents.registry import load_agent
from kc_sim.play.driver.runner import play_rounds
from tests.helpers.positions import play_turn, position


def _turn_starts(seeds, players):
    """The state at the start of every turn of classic rounds played by random_policy, one
    round per seed (the same array, advanced between yields)."""
    codes = parse_rules("classic").codes()
    for seed in seeds:
        st = np.zeros(L.STATE_SIZE, np.int64)
        deal(st, seed, players, 0, codes)
        mem = np.zeros(MEM_SIZE, np.int64)
        mem[0] = seed
        while not st[L.DONE]:
            if st[L.TURN_ACTIONS] == 0:
                yield st
            apply(st, random_policy(st, int(st[L.SEAT]), mem))


def test_goes_out_through_a_pile_move_worked_example_2():
    # N 8C 7H moves onto E 9D, the freed side takes 4S, then 3H on 4S: out
    g = position(["4S", "3H"], [["8C", "7H"], ["9D"], ["JC"], ["2H"]])
    assert play_turn(planner_policy, g) == ["N>E", "4S>N", "3H>N"]
    assert g.over and g.winner == 1


def test_finds_the_order_greedy_misses():
    # greedy puts QD on N (KS) at once; going out needs the K-pile moved to a corner first so
    # that N is free for the 5H, and the JC built on QD: the planner finds a line that goes out
    g = position(["5H", "JC", "QD", "2S"], [["KS"], ["9C"], ["8H"], ["3C"]])
    actions = play_turn(planner_policy, g)
    assert g.over and g.winner == 1, actions


def test_plan_is_kept_in_memory_and_replayed():
    g = position(["4S", "3H", "AD", "KC"], [["8C", "7H"], ["9D"], ["JC"], ["2H"]])
    mem = np.zeros(MEM_SIZE, dtype=np.int64)
    first = int(planner_policy(g.state, g.seat, mem))
    assert mem[M_TURN] == g.turns and mem[M_LEN] >= 1
    plan = [int(x) for x in mem[8:8 + mem[M_LEN]]]
    assert plan[0] == first
    g.play(first)
    for a in plan[1:]:
        assert int(planner_policy(g.state, g.seat, mem)) == a
        g.play(a)
    if not g.over:
        assert int(planner_policy(g.state, g.seat, mem)) == STOP
    # a position the plan was not made for: it re-plans (and plays legally)
    h = position(["5H", "JC"], [["KS"], ["9C"], ["8H"], ["3C"]])
    a = int(planner_policy(h.state, h.seat, mem))
    assert is_legal(h.state, a) and mem[M_TURN] == h.turns


def test_penalty_first_sheds_a_king_and_keeps_the_fewest_openings():
    st = position(["KC", "5D"], [["9C"], ["8H"], ["3C"], ["JD"]]).state
    seat = int(st[L.SEAT])
    plans = np.zeros((4, MAX_PLAN + 1), np.int64)
    lens = np.zeros(4, np.int64)
    scores = np.zeros(4, np.int64)
    k, _ = turn_search(st, seat, DEFAULT_WEIGHTS, 500, 4, plans, lens, scores)
    assert k >= 2 and list(scores[:k]) == sorted(scores[:k])
    best = [action_text(int(a)) for a in plans[0, :lens[0]]]
    assert "KC>NE" in best               # a king costs 10: it goes to a corner


def test_packed_piles_round_trip():
    x = np.int64(0)
    for p, c in enumerate([5, -1, 51, 0, 12, -1, -1, 38]):
        x = pile_set(x, p, c)
    assert [pile_get(x, p) for p in range(8)] == [5, -1, 51, 0, 12, -1, -1, 38]
    g = position(["4S"], [["8C", "7H"], ["9D"], [], ["2H"]])
    t = pack_piles(g.state, L.PILE_TOP)
    assert [pile_get(t, p) for p in range(8)] == [parse_card("7H"), parse_card("9D"), -1, parse_card("2H"),
                                                  -1, -1, -1, -1]
    assert evaluate(0, 0, t, t, 0, 0, 0, 0, DEFAULT_WEIGHTS, 64) == 0     # an empty hand is the best end


def test_sleep_sets_and_transpositions_lose_no_position():
    """Uncapped, the search with and without sleep sets finds the same best score in many
    positions from random play."""
    plans = np.zeros((1, MAX_PLAN + 1), np.int64)
    lens = np.zeros(1, np.int64)
    s1, s2 = np.zeros(1, np.int64), np.zeros(1, np.int64)
    checked = 0
    for st in _turn_starts(range(25), 2):
        turn_search(st, int(st[L.SEAT]), DEFAULT_WEIGHTS, 100000, 1, plans, lens, s1, True)
        turn_search(st, int(st[L.SEAT]), DEFAULT_WEIGHTS, 100000, 1, plans, lens, s2, False)
        assert s1[0] == s2[0]
        checked += 1
    assert checked > 200


@pytest.mark.parametrize("rules", [f"draw={d}" for d in DRAW] + [f"layout_kings={x}" for x in LAYOUT_KINGS]
                         + [f"scoring={x}" for x in SCORING]
                         + ["king_on_empty_side=false", "must_play_kings=true", "decks=2", "draw_first"])
def test_legal_and_deterministic_under_every_variant(rules):
    players = 6 if rules == "decks=2" else 3
    seeds = np.arange(40, dtype=np.int64)
    agents = ["planner", "greedy", "planner"] + ["random"] * (players - 3)
    a = play_rounds(agents, seeds, rules)          # an illegal action would raise AgentFault
    b = play_rounds(agents, seeds, rules)
    assert (a == b).all() and (a[:, loop.C_STATUS] == 0).all()


def test_beats_greedy_on_duplicate_deals():
    seeds = np.arange(1500, dtype=np.int64) + 10_000
    r1 = play_rounds(["planner", "greedy"], seeds, "classic")
    r2 = play_rounds(["greedy", "planner"], seeds, "classic")
    wins = (r1[:, loop.C_WINNER] == 0).sum() + (r2[:, loop.C_WINNER] == 1).sum()
    assert wins / 3000 > 0.6
    assert load_agent("planner").policy is planner_policy


def test_bit_parallel_helpers_match_the_tables():
    """``fits_on_set`` is the union of ``FITS_ON`` over a set of tops, and ``piles_topped_by``
    finds exactly the piles whose top is a card (two decks: two piles may share one)."""
    from agents.position import fits_on_set, piles_topped_by
    from kc_sim.game.cards import FITS_ON
    rng = np.random.default_rng(3)
    for _ in range(2000):
        tops = [int(c) for c in rng.choice(52, size=int(rng.integers(0, 9)), replace=False)]
        mask = 0
        expect = 0
        for t in tops:
            mask |= 1 << t
            expect |= int(FITS_ON[t])
        assert int(fits_on_set(np.int64(mask))) == expect
        piles = [int(c) if rng.random() < 0.8 else -1 for c in rng.integers(0, 52, size=8)]
        piles[int(rng.integers(8))] = piles[int(rng.integers(8))]      # a repeated top now and then
        x = np.int64(0)
        for p, c in enumerate(piles):
            x = pile_set(x, p, c)
        for t in set(c for c in piles if c >= 0) | {0, 51}:
            got = int(piles_topped_by(x, t))
            assert got == sum(1 << (6 * p + 5) for p, c in enumerate(piles) if c == t)


def test_search_in_a_reused_workspace_is_turn_search():
    """One workspace reused by many searches (as the sampler's rollouts do) gives the same
    plans and scores as a fresh one each time, and is left with an empty table."""
    from agents.search import TABLE_SIZE, new_workspace, search
    ws = new_workspace()
    p1, l1, s1 = np.zeros((4, MAX_PLAN + 1), np.int64), np.zeros(4, np.int64), np.zeros(4, np.int64)
    p2, l2, s2 = np.zeros((4, MAX_PLAN + 1), np.int64), np.zeros(4, np.int64), np.zeros(4, np.int64)
    checked = 0
    for st in _turn_starts(range(12), 3):
        for cap, k in ((500, 4), (40, 1)):
            n1, c1 = turn_search(st, int(st[L.SEAT]), DEFAULT_WEIGHTS, cap, k, p1, l1, s1)
            n2, c2 = search(st, int(st[L.SEAT]), DEFAULT_WEIGHTS, cap, k, p2, l2, s2, True, True, ws)
            assert (n1, c1) == (n2, c2) and (s1[:n1] == s2[:n2]).all() and (l1[:n1] == l2[:n2]).all()
            assert all((p1[i, :l1[i]] == p2[i, :l2[i]]).all() for i in range(n1))
            assert not ws[:TABLE_SIZE].any()
        checked += 1
    assert checked > 100
