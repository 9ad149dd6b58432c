"""``observation="planes_opens"``: the planes, then for every legal action what it would open
to the next player, checked against a direct count on kc-sim's own game after playing it."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from kc_sim.core import layout as L
from kc_sim.env.obs_planes import PLANES_OPENS_SIZE, PLANES_SIZE, encode, planes
from kc_sim.env.obs_vector import OBS_SIZE, fill_observation
from kc_sim.game.cards import FITS_ON, KINGS_MASK, N_CARDS, NON_KINGS_MASK
from kc_sim.game.rules import parse_rules
from kc_sim.play.table.game import Game


def _fits_somewhere(game) -> int:
    """Cards that may go on the table as it is (kc-sim's rules: a top's FITS_ON, any card on
    an empty side but kings when king_on_empty_side is off, kings on an empty corner)."""
    side_ok = NON_KINGS_MASK | (KINGS_MASK if game.rules.king_on_empty_side else 0)
    m = 0
    for p in range(8):
        pile = game.pile(p)
        m |= int(FITS_ON[pile[-1]]) if pile else (side_ok if p < 4 else int(KINGS_MASK))
    return m


def _unseen_fitting(game, seat, after=None) -> int:
    """Copies of cards in neither ``seat``'s hand nor on the table that fit somewhere (after the action)."""
    g = after or game
    seen = g.hand(seat) + [c for p in range(8) for c in g.pile(p)]
    m = _fits_somewhere(g)
    return sum(max(game.rules.decks - seen.count(c), 0) for c in range(N_CARDS) if (m >> c) & 1)


@pytest.mark.parametrize("rules,players", [("classic", 2), ("classic", 4), ("king_on_empty_side=false", 3),
                                           ("classic,decks=2", 5), ("draw=start,must_play_kings=true", 2)])
def test_opens_counts_what_each_legal_action_opens(rules, players):
    rs = parse_rules(rules)
    rng = np.random.default_rng(1)
    checked = 0
    for seed in range(4):
        g = Game(players=players, rules=rules, seed=seed)
        while not g.over:
            vec = np.zeros(OBS_SIZE, np.int8)
            fill_observation(g.state, g.seat, vec)
            obs = encode(vec, rs, "planes_opens")
            assert obs.shape == (PLANES_OPENS_SIZE,)
            assert np.array_equal(obs[:PLANES_SIZE], planes(vec, rs))
            now = _unseen_fitting(g, g.seat)
            legal = g.legal_actions()
            for a in legal:
                if a == L.STOP:
                    assert obs[PLANES_SIZE + a] == 0
                    continue
                after = copy.deepcopy(g)
                after.play(a)
                expect = np.clip((_unseen_fitting(g, g.seat, after) - now) / 13.0, -1, 1)
                assert obs[PLANES_SIZE + a] == pytest.approx(expect, abs=1e-6), (rules, seed, a)
                checked += 1
            g.play(int(rng.choice(legal)))
    assert checked > 100


def test_environments_serve_planes_opens():
    pytest.importorskip("gymnasium")
    from kc_sim.env.batch import BatchEnv
    from kc_sim.env.gym_env import KcVectorEnv

    b = BatchEnv(8, players=3, opponents={1: "greedy"}, observation="planes_opens")
    v = BatchEnv(8, players=3, opponents={1: "greedy"})
    out, ref = b.reset(3), v.reset(3)
    rs = parse_rules("classic")
    for _ in range(40):
        for i in range(8):
            assert np.array_equal(out.observation[i], encode(ref.observation[i], rs, "planes_opens"))
        a = v.sample().copy()
        out, ref = b.step(a), v.step(a)
    venv = KcVectorEnv(4, players=2, opponents="random", observation="planes_opens")
    obs, _ = venv.reset(seed=1)
    assert obs in venv.observation_space
