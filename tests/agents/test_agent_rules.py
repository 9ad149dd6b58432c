"""The agents' own readings of the rules agree with the core's legal actions.

``agents/common.py`` (what may be placed, where a card goes, the first pile move, the
greedy choice) and ``agents/search.py`` (``_children``: the canonical placements and pile
moves of the planner's search) restate parts of the rules on their own masks, for speed.
At every decision of random rounds under every fourth combination of the round switches,
each is compared with ``kc_sim.core.legal.legal_mask``."""

from __future__ import annotations

import random

import numpy as np
import pytest

from agents import common
from agents.position import MAX_CHILDREN, pack_piles
from agents.position import children as _children
from kc_sim.core import layout as L
from kc_sim.core.legal import legal_mask
from kc_sim.play.table.game import Game
from kc_sim.testing import round_rule_sets

RULE_SETS = round_rule_sets()[::4]


def _canonical(st, legal: set[int], side_ok: int) -> set[int]:
    """The legal placements and pile moves as the search lists them: a card for an empty
    side goes to the first empty side, a king for an empty corner to the first empty
    corner, and pile moves only while the hand holds a card the freed side would take."""
    tops = [int(st[L.PILE_TOP + p]) for p in range(8)]
    first_side = next((p for p in range(4) if tops[p] < 0), -1)
    first_corner = next((p for p in range(4, 8) if tops[p] < 0), -1)
    out = set()
    for a in legal:
        if a < L.MOVE_BASE:
            c, p = a >> 3, a & 7
            out.add(a if tops[p] >= 0 else c * 8 + (first_side if p < 4 else first_corner))
        elif int(st[L.HAND + 2 * int(st[L.SEAT])]) & side_ok:
            s, p = (a - L.MOVE_BASE) >> 3, (a - L.MOVE_BASE) & 7
            out.add(a if tops[p] >= 0 else L.MOVE_BASE + s * 8 + first_corner)
    return out


@pytest.mark.parametrize("rules", RULE_SETS, ids=lambda r: r.spec().rsplit(",match", 1)[0])
def test_agent_rule_code_matches_the_legal_actions(rules):
    mask = np.zeros(L.STOP + 1, dtype=np.bool_)
    out = np.zeros(MAX_CHILDREN, np.int64)
    checked = 0
    for seed in range(3):
        players = 2 + seed % (rules.max_players - 1)
        g = Game(players, rules, seed)
        rng = random.Random(seed)
        while not g.over:
            st, seat = g.state, g.seat
            legal_mask(st, mask)
            legal = {int(a) for a in np.flatnonzero(mask)} - {L.STOP}
            hand = int(common.own_hand(st, seat))
            side_ok = int(common.empty_side_mask(st))
            # common.py
            placeable = {a >> 3 for a in legal if a < L.MOVE_BASE}
            got = int(common.placeable(st, hand))
            assert {c for c in range(52) if got >> c & 1} == placeable
            for c in placeable:
                assert c * 8 + int(common.best_pile(st, c)) in legal
            moves = sorted(a for a in legal if a >= L.MOVE_BASE)
            assert int(common.first_move(st)) == (moves[0] if moves else -1)
            g_act = int(common.greedy_action(st, seat))
            assert g_act in legal or (g_act == -1 and mask[L.STOP])
            # search.py
            n = _children(np.int64(hand), pack_piles(st, L.PILE_TOP), pack_piles(st, L.PILE_BASE),
                          np.int64(side_ok), out)
            kids = [int(a) for a in out[:n]]
            assert len(kids) == len(set(kids)) and set(kids) == _canonical(st, legal, side_ok)
            checked += 1
            plays = sorted(legal)
            g.play(rng.choice(plays) if plays and rng.random() > 0.1 else L.STOP if mask[L.STOP] else plays[0])
    assert checked > 100
