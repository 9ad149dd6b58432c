"""The fast forms of the legal-play enumeration agree with the one enumerator
(``place_mask`` + ``move_mask`` in kc_sim.core.legal) on random positions under every
round rule set: ``count_moves``' one-deck shortcut, ``is_legal``, ``count_plays``,
``nth_play``'s order, ``fill_view``'s legal list and ``random_policy``'s choice."""

import random

import numpy as np
import pytest

from agents.common import first_move
from kc_sim.core import layout as L
from kc_sim.core.ids import place_id
from kc_sim.core.legal import (
    count_moves,
    count_plays,
    hand_mask,
    has_play,
    is_legal,
    legal_mask,
    move_mask,
    nth_play,
    place_mask,
)
from kc_sim.core.policy import MEM_SIZE, random_policy
from kc_sim.core.rng import below
from kc_sim.play.table.game import Game
from kc_sim.play.table.view import V_LEGAL, VIEW_SIZE, fill_view
from tests.helpers.differential import player_counts, rule_sets

RULE_SETS = rule_sets()


def positions(rules, n_rounds: int, seed0: int):
    """Every decision point of ``n_rounds`` random rounds (copies of the state)."""
    counts = list(player_counts(rules))
    for i in range(n_rounds):
        g = Game(counts[i % len(counts)], rules, seed0 + i)
        rng = random.Random(seed0 + i)
        while not g.over:
            yield g.state.copy()
            legal = g.legal_actions()
            stop_ok = L.STOP in legal
            plays = [a for a in legal if a != L.STOP]
            g.play(L.STOP if stop_ok and (not plays or rng.random() < 0.2) else rng.choice(plays))


def expected_plays(st):
    """The plays from the enumerator, in nth_play's order: placements pile by pile (cards
    ascending), then moves in id order."""
    hand = int(hand_mask(st, st[L.SEAT]))
    out = []
    for p in range(L.N_PILES):
        m = int(place_mask(st, hand, p))
        out += [int(place_id(c, p)) for c in range(52) if m >> c & 1]
    mm = int(move_mask(st))
    out += [L.MOVE_BASE + b for b in range(32) if mm >> b & 1]
    return out


@pytest.mark.parametrize("rules", RULE_SETS, ids=[r.spec() for r in RULE_SETS])
def test_fast_forms_agree_with_the_enumerator(rules):
    mask = np.zeros(L.N_ACTIONS, dtype=np.bool_)
    vis = np.zeros(VIEW_SIZE, dtype=np.int64)
    mem = np.zeros(MEM_SIZE, dtype=np.int64)
    checked = 0
    for st in positions(rules, 6, 1000):
        legal_mask(st, mask)
        legal = [int(a) for a in np.flatnonzero(mask)]
        plays = expected_plays(st)
        assert sorted(plays) == [a for a in legal if a != L.STOP]
        assert [bool(is_legal(st, a)) for a in range(L.N_ACTIONS)] == mask.tolist()
        assert count_moves(st) == bin(int(move_mask(st))).count("1")
        assert count_plays(st) == len(plays) and has_play(st) == bool(plays)
        assert [nth_play(st, i) for i in range(len(plays) + 1)] == plays + [-1]
        n = fill_view(st, vis)
        assert vis[V_LEGAL:V_LEGAL + n].tolist() == legal
        moves = [a for a in plays if a >= L.MOVE_BASE]
        assert first_move(st) == (moves[0] if moves else -1)
        # random_policy draws the below(k)-th play of nth_play's order, stop when none
        mem[0] = checked * 7919 + 1
        gen = mem[:1].copy()
        a = random_policy(st, st[L.SEAT], mem)
        assert a == (plays[below(gen, 0, len(plays))] if plays else L.STOP)
        checked += 1
    assert checked > 50
