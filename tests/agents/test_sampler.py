"""The sampler: legal, seeded and deterministic, its budget option, and that it decides only
from what its seat may see (permuting the hidden cards never changes a decision)."""

from __future__ import annotations

import numpy as np
import pytest

from agents.sampler import (
    DEFAULT_BUDGET,
    sampler_act,
    sampler_with_budget,
    unseen_cards,
)
from agents.position import unseen_mask
from kc_sim.core import layout as L
from kc_sim.core.legal import has_play, is_legal
from kc_sim.core.loop import seed_policies
from kc_sim.core.policy import MEM_SIZE
from kc_sim.core.step import apply, deal, first_dealer
from kc_sim.errors import UserError
from kc_sim.game.rules import parse_rules
from kc_sim.play.agents.registry import load_agent
from kc_sim.play.driver.runner import play_rounds
from kc_sim.testing import permute_hidden

BUDGET = 3


@pytest.mark.parametrize("rules,players", [("classic", 2), ("classic", 3), ("draw_first,decks=2", 3)])
def test_decisions_do_not_depend_on_hidden_cards(rules, players):
    """At every planning decision of the sampler (seat 0) in a few rounds, permuting the
    unseen cards among the other hands and the stock changes neither the action nor the
    plan kept in memory."""
    policy = sampler_with_budget(BUDGET)
    other = load_agent("planner").policy
    codes = parse_rules(rules).codes()
    rng = np.random.default_rng(7)
    checked = 0
    for seed in range(4):
        st = np.zeros(L.STATE_SIZE, np.int64)
        deal(st, seed, players, first_dealer(seed, players), codes)
        mem = np.zeros((L.MAX_SEATS, MEM_SIZE), np.int64)
        seed_policies(mem, seed, players)
        for _ in range(3000):
            if st[L.DONE]:
                break
            seat = int(st[L.SEAT])
            if seat == 0:
                planning = st[L.TURN_ACTIONS] == 0 and has_play(st)
                if planning:
                    before = mem[0].copy()
                    a = policy(st, seat, mem[0])
                    after = mem[0].copy()
                    for _ in range(2):
                        m2 = before.copy()
                        a2 = policy(permute_hidden(st, seat, rng), seat, m2)
                        assert a2 == a and (m2 == after).all()
                    checked += 1
                else:
                    a = policy(st, seat, mem[0])
            else:
                a = other(st, seat, mem[seat])
            assert is_legal(st, a)
            apply(st, a)
    assert checked >= 10


def test_unseen_cards_are_what_the_seat_has_not_seen():
    st = np.zeros(L.STATE_SIZE, np.int64)
    codes = parse_rules("classic").codes()
    deal(st, 3, 2, 0, codes)
    cards = np.empty(104, np.int64)
    n = unseen_cards(st, 1, cards)
    hidden = set(int(c) for c in st[L.STOCK + st[L.STOCK_POS]:L.STOCK + st[L.STOCK_LEN]])
    hidden |= {c for c in range(52) if int(st[L.HAND]) >> c & 1}
    assert sorted(cards[:n].tolist()) == sorted(hidden)
    assert bin(int(unseen_mask(st, 1))).count("1") == n == 52 - 7 - 4


def test_seeded_deterministic_and_legal():
    seeds = np.arange(6, dtype=np.int64)
    spec = load_agent(f"sampler:{BUDGET}")
    a = play_rounds([spec, "planner"], seeds, "classic")
    b = play_rounds([spec, "planner"], seeds, "classic")
    assert (a == b).all()
    c = play_rounds(["planner", spec, "greedy"], seeds[:3], "classic,must_play_kings=true,scoring=face")
    assert (c[:, 8] == 0).all()     # C_STATUS ok


def test_budget_names(tmp_path):
    assert load_agent("sampler").name == "sampler"
    assert load_agent(f"sampler:{DEFAULT_BUDGET}").name == "sampler"
    assert load_agent("sampler:5").name == "sampler-5"          # the label in results
    assert load_agent("sampler-5") is load_agent("Sampler_5") is load_agent("sampler:5")
    assert load_agent("sampler:5").policy is sampler_with_budget(5)
    assert load_agent("king-first").name == "king-first"
    for bad in ("sampler:0", "sampler:x", "sampler:100000", "sampler-"):
        with pytest.raises(UserError, match="sampler:N"):
            load_agent(bad)


def test_budget_name_in_a_tournament(tmp_path):
    from kc_sim.tournament.run import run_tournament
    res = run_tournament(["sampler:2", "greedy"], players=2, rounds=40, jobs=1, out=tmp_path / "t", quiet=True)
    assert res.plan.labels == ["greedy", "sampler-2"]          # sorted by name: the order given does not matter
    assert set(res.summary["agent"]) == {"sampler-2", "greedy"}


def test_budget_zero_plays_the_planners_line():
    """With no worlds to sample, the sampler plays the planner's best line."""
    st = np.zeros(L.STATE_SIZE, np.int64)
    deal(st, 11, 2, 0, parse_rules("classic").codes())
    mem = np.zeros(MEM_SIZE, np.int64)
    mem2 = np.zeros(MEM_SIZE, np.int64)
    a = sampler_act(st, int(st[L.SEAT]), mem, 0)
    b = load_agent("planner").policy(st, int(st[L.SEAT]), mem2)
    assert a == b


def test_a_line_that_goes_out_is_played_at_once():
    """When the planner's best line goes out the sampler plays it without sampling a world
    (its generator is not drawn from)."""
    from tests.helpers.positions import position
    g = position(["4S", "3H"], [["8C", "7H"], ["9D"], ["JC"], ["2H"]])
    mem = np.zeros(MEM_SIZE, np.int64)
    mem[0] = 12345
    a = sampler_act(g.state, g.seat, mem, DEFAULT_BUDGET)
    assert mem[0] == 12345
    plan = [int(x) for x in mem[8:8 + mem[3]]]
    assert plan[0] == a
    for x in plan:
        g.play(x)
    assert g.over and g.winner == 1
