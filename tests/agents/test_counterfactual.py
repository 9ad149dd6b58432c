"""The counterfactual agents (agents/counterfactual.py) and ``random:N`` (agents/random_agent.py).

A counterfactual must be legal everywhere, and must change exactly one choice of its base:
stepping rounds decision by decision, at every decision of the counterfactual the base
policy is asked on the same state; the two must agree whenever the changed choice does not
arise (a predicate restated here from the docstrings, not from the code), and must differ on
some decisions (else the experiment would again compare an agent with itself).
"""

import numpy as np
import pytest

from agents.counterfactual import COUNTERFACTUALS
from agents.greedy import SPEC as GREEDY
from agents.merger import SPEC as MERGER
from agents.random_agent import SPEC as RANDOM
from kc_sim.core import layout
from kc_sim.core.legal import is_legal, move_mask
from kc_sim.core.loop import MAX_DECISIONS, seed_policies
from kc_sim.core.policy import MEM_SIZE, random_policy
from kc_sim.core.rng import derive
from kc_sim.core.step import apply, deal, first_dealer
from kc_sim.errors import UserError
from kc_sim.game.actions import (
    STOP,
    id_card,
    id_pile,
    id_side,
    is_corner,
    is_move,
    is_place,
)
from kc_sim.game.cards import KING, RANK
from kc_sim.game.variants import R_KING_ON_EMPTY_SIDE
from kc_sim.play.agents.registry import load_agent
from kc_sim.play.driver.runner import play_rounds
from kc_sim.testing import check_agent, round_rule_sets

BASES = {"greedy": GREEDY, "pile-merger": MERGER}
# every 8th of the 96 round rule sets: both draw timings' extremes, both layout rules,
# kings on sides or not, one and two decks, must_play_kings (checked: each value occurs)
SETS = round_rule_sets()[::7]
NON_KINGS = sum(1 << c for c in range(52) if RANK[c] != KING)


def _king_action(st, a):
    if is_place(a):
        return RANK[id_card(a)] == KING
    if is_move(a):
        return RANK[int(st[layout.PILE_BASE + id_side(a)])] == KING
    return False


def _empty(st, p):
    return int(st[layout.PILE_TOP + p]) < 0


# name -> (does the changed choice arise at this state, given the base's action?,
#          is the counterfactual's action of the changed kind?)
def _arises_kings(st, seat, base):
    return _king_action(st, base) or (is_move(base) and not int(st[layout.HAND + 2 * seat]) & NON_KINGS)


def _arises_sides(st, seat, base):
    return (is_place(base) and RANK[id_card(base)] == KING and is_corner(id_pile(base))
            and bool(st[layout.RULES + R_KING_ON_EMPTY_SIDE]) and (any(_empty(st, p) for p in range(4))
                                                                   or move_mask(st) != 0))


def _on_empty_side(st, a):
    return is_place(a) and not is_corner(id_pile(a)) and _empty(st, id_pile(a))


RULE = {
    "greedy-kings-last": (lambda st, s, b: _king_action(st, b),
                          lambda st, s, a, b: not _king_action(st, a)),
    "greedy-hold-kings": (_arises_kings,
                          lambda st, s, a, b: a == STOP or not _king_action(st, a)),
    "greedy-kings-sides": (_arises_sides,
                           lambda st, s, a, b: is_move(a) or (id_card(a) == id_card(b) and _on_empty_side(st, a))),
    "greedy-no-merge": (lambda st, s, b: is_move(b), lambda st, s, a, b: not is_move(a)),
    "merger-no-merge": (lambda st, s, b: is_move(b), lambda st, s, a, b: not is_move(a)),
    "greedy-low-sides": (lambda st, s, b: _on_empty_side(st, b),
                         lambda st, s, a, b: id_pile(a) == id_pile(b) and RANK[id_card(a)] < RANK[id_card(b)]),
    "merger-low-sides": (lambda st, s, b: _on_empty_side(st, b),
                         lambda st, s, a, b: id_pile(a) == id_pile(b) and RANK[id_card(a)] < RANK[id_card(b)]),
}


def _compare(cf, base, rounds=6, opponent=None):
    """Step rounds of ``cf`` (every seat, or seat 0 against ``opponent``) and compare with
    ``base`` at each of cf's decisions. Returns (decisions, arising, differing, bad) where
    ``bad`` lists the first few disagreements outside the changed choice."""
    arises, kind = RULE[cf.name]
    n = n_arise = n_diff = 0
    bad = []
    for i, rules in enumerate(SETS):
        codes = rules.codes()
        k = 2 + i % 2
        for r in range(rounds):
            seed = 1000 * i + r
            st = np.zeros(layout.STATE_SIZE, np.int64)
            deal(st, seed, k, first_dealer(seed, k), codes)
            mem = np.zeros((layout.MAX_SEATS, MEM_SIZE), np.int64)
            seed_policies(mem, seed, k)
            for _ in range(MAX_DECISIONS):
                if st[layout.DONE]:
                    break
                s = int(st[layout.SEAT])
                if opponent is not None and s != 0:
                    apply(st, opponent.policy(st, s, mem[s]))
                    continue
                b = int(base.policy(st, s, mem[s].copy()))
                a = int(cf.policy(st, s, mem[s]))
                assert is_legal(st, a), (cf.name, rules.spec(), seed, a)
                n += 1
                if arises(st, s, b):
                    n_arise += 1
                    if a != b:
                        n_diff += 1
                        assert kind(st, s, a, b), (cf.name, rules.spec(), seed, a, b)
                elif a != b and len(bad) < 5:
                    bad.append((rules.spec(), seed, int(st[layout.TURNS]), a, b))
                apply(st, a)
            assert st[layout.DONE], (cf.name, rules.spec(), seed, "round never ended")
    return n, n_arise, n_diff, bad


@pytest.mark.parametrize("name", sorted(COUNTERFACTUALS))
def test_counterfactual_changes_only_its_choice(name):
    base_name, cf = COUNTERFACTUALS[name]
    base = BASES[base_name]
    for opponent in (None, RANDOM):
        n, n_arise, n_diff, bad = _compare(cf, base, opponent=opponent)
        assert n > 1000
        assert bad == [], f"{name} differs from {base_name} where its changed choice does not arise: {bad}"
        assert n_diff > 0, f"{name} never differs from {base_name} ({n_arise} of {n} decisions could)"


def test_sets_cover_every_switch():
    assert {r.draw for r in SETS} == {"end", "start", "if_stuck"}
    assert {r.king_on_empty_side for r in SETS} == {True, False}
    assert {r.decks for r in SETS} == {1, 2}
    assert {r.must_play_kings for r in SETS} == {True, False}
    assert {r.layout_kings for r in SETS} == {"stay", "to_corner"}


def test_kings_sides_is_greedy_without_kings_on_sides():
    """Under king_on_empty_side=false (draw_first) greedy-kings-sides plays greedy's rounds."""
    cf = COUNTERFACTUALS["greedy-kings-sides"][1]
    seeds = np.arange(300)
    for table in ([cf, GREEDY], [GREEDY, cf]):
        assert np.array_equal(play_rounds(table, seeds, "draw_first"), play_rounds([GREEDY, GREEDY], seeds,
                                                                                  "draw_first"))
    assert not np.array_equal(play_rounds([cf, GREEDY], seeds, "classic"),
                              play_rounds([GREEDY, GREEDY], seeds, "classic"))


def test_merger_no_merge_is_not_greedy():
    """The brief's question: is pile-merger without its moves simply greedy? No: step 2
    (fill an empty side with the highest card first) stays. A position: 9C fits on 10H at N,
    E is empty; greedy puts 9C on N, merger-no-merge on E."""
    cf = COUNTERFACTUALS["merger-no-merge"][1]
    st = np.zeros(layout.STATE_SIZE, np.int64)
    deal(st, 3, 2, first_dealer(3, 2), round_rule_sets()[0].codes())
    seat = int(st[layout.SEAT])
    ten_h, nine_c, five_h = 2 * 13 + 9, 0 * 13 + 8, 2 * 13 + 4     # card = suit * 13 + rank - 1
    st[layout.HAND + 2 * seat] = (1 << nine_c) | (1 << five_h)
    for p in range(8):
        st[layout.PILE_TOP + p] = st[layout.PILE_BASE + p] = -1
        st[layout.PILE_MASK + p] = st[layout.PILE_SIZE + p] = 0
    for p, c in ((0, ten_h), (2, 3 * 13), (3, 3)):              # N 10H, S AS, W 4C: no pile can move
        st[layout.PILE_TOP + p] = st[layout.PILE_BASE + p] = c
        st[layout.PILE_MASK + p], st[layout.PILE_SIZE + p] = 1 << c, 1
    mem = np.zeros(MEM_SIZE, np.int64)
    assert move_mask(st) == 0
    assert GREEDY.policy(st, seat, mem) == nine_c * 8 + 0        # 9C on N (10H)
    assert cf.policy(st, seat, mem) == nine_c * 8 + 1            # 9C on the empty side E
    assert MERGER.policy(st, seat, mem) == nine_c * 8 + 1        # as pile-merger (no move is legal)


def test_counterfactuals_pass_the_conformance_check():
    for name, (_, cf) in sorted(COUNTERFACTUALS.items()):
        report = check_agent(cf, rounds=1, permuted_rounds=1)
        assert report.passed, str(report)


# --- random:N ---------------------------------------------------------------------------------

def test_random_n_loads_and_checks_its_range():
    one = load_agent("random:1")
    assert one.name == "random-1" and one.compiled and one.policy is not random_policy
    assert load_agent("random-1") is one and load_agent("random:2").name == "random-2"
    assert load_agent("random").policy is random_policy          # plain random is untouched
    for bad in ("random:0", "random:2147483648", "random:x"):
        with pytest.raises(UserError, match="random:N"):
            load_agent(bad)


def test_random_n_salts_the_stream_at_the_first_decision():
    """Its first decision is random_policy's from mem[0] = derive(mem[0], N); later ones
    continue that stream."""
    salted = load_agent("random:5").policy
    st = np.zeros(layout.STATE_SIZE, np.int64)
    deal(st, 11, 2, first_dealer(11, 2), round_rule_sets()[0].codes())
    mem = np.zeros((layout.MAX_SEATS, MEM_SIZE), np.int64)
    seed_policies(mem, 11, 2)
    s = int(st[layout.SEAT])
    ref = mem[s].copy()
    ref[0] = derive(ref[0], 5)
    mine = mem[s].copy()
    for _ in range(3):
        a = salted(st, s, mine)
        assert a == random_policy(st, s, ref)
        assert mine[0] == ref[0]
        if a == STOP:
            break
        apply(st, a)


def test_random_n_pairs_differ_and_reproduce():
    seeds = np.arange(200)
    r1 = play_rounds(["random:1", "greedy"], seeds, "classic")
    r2 = play_rounds(["random:2", "greedy"], seeds, "classic")
    r0 = play_rounds(["random", "greedy"], seeds, "classic")
    assert np.array_equal(r1, play_rounds(["random:1", "greedy"], seeds, "classic"))
    assert (r1 != r2).any(axis=1).mean() > 0.5          # different choices on most deals
    assert (r1 != r0).any(axis=1).mean() > 0.5
    # an A/A pair seated both ways: the copies do not replay each other's games
    a = play_rounds(["random:1", "random:2"], seeds, "classic")
    b = play_rounds(["random:2", "random:1"], seeds, "classic")
    assert (a != b).any(axis=1).mean() > 0.5
