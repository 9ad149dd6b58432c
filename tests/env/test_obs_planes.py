"""The learnable encoding: a faithful, seat-restricted recoding of the observation vector
(every field read back), its "fits" planes agree with the core's legal placements at every
decision, and both environments serve it."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from kc_sim.core import layout as L
from kc_sim.core.ids import place_id
from kc_sim.core.legal import legal_mask
from kc_sim.env.batch import BatchEnv
from kc_sim.env.obs_planes import PLANES, PLANES_SIZE, planes
from kc_sim.env.obs_vector import OBS_SIZE, fill_observation, split_observation
from kc_sim.game.rules import parse_rules
from kc_sim.play.table.game import Game

RULES = ["classic", "draw_first", "classic,draw=if_stuck,must_play_kings=true", "classic,scoring=face",
         "classic,king_on_empty_side=false", "classic,layout_kings=to_corner", "classic,decks=2"]


def _decode(p: np.ndarray) -> dict:
    """The vector's fields read back from the planes."""
    g = {k: p[sl] for k, sl in PLANES.items()}
    top = g["top"].reshape(8, 52)
    base = g["base"].reshape(8, 52)
    return {
        "hand": (g["hand"] + g["hand2"]).astype(int),
        "table": (g["table"] + g["table2"]).astype(int),
        "top": np.where(top.any(axis=1), top.argmax(axis=1), -1),
        "base": np.where(base.any(axis=1), base.argmax(axis=1), -1),
        "size": np.rint(g["size"] * 13).astype(int),
        "stock": int(round(float(g["stock"][0]) * 104)),
        "dealer": int(g["dealer"].argmax()),
        "drew": int(g["drew"].argmax()) if g["drew"].argmax() < 52 else -1,
        "players": int(g["players"].argmax()) + 2,
        "to_act": int(g["to_act"].argmax()) if g["to_act"].argmax() < 8 else -1,
    }


def _rounds(rules, players, seeds):
    rng = np.random.default_rng(0)
    for seed in seeds:
        g = Game(players, rules, seed)
        while not g.over:
            yield g
            legal = np.flatnonzero(g.legal_mask())
            g.play(int(rng.choice(legal)))
        yield g


@pytest.mark.parametrize("rules", RULES)
def test_planes_read_back_as_the_vector_and_fits_as_the_core(rules):
    rs = parse_rules(rules)
    players = 5 if rs.decks == 2 else 3
    vec = np.zeros(OBS_SIZE, dtype=np.int8)
    checked = 0
    for g in _rounds(rs, players, range(6)):
        seat = g.seat if not g.over else 0
        fill_observation(g.state, seat, vec)
        p = planes(vec, rs)
        assert p.shape == (PLANES_SIZE,) and p.dtype == np.float32 and p.min() >= 0 and p.max() <= 1
        want = split_observation(vec)
        got = _decode(p)
        for k, v in got.items():
            assert np.array_equal(np.asarray(v), np.asarray(want[k])), (rules, k)
        if not g.over:
            mask = np.zeros(L.N_ACTIONS, dtype=np.bool_)
            legal_mask(g.state, mask)
            fits = p[PLANES["fits"]].reshape(8, 52)
            hand = p[PLANES["hand"]]
            for pile in range(8):
                for c in range(52):
                    assert mask[place_id(c, pile)] == bool(hand[c] and fits[pile, c]), (rules, pile, c)
            checked += 1
    assert checked > 50


def test_both_environments_serve_the_planes():
    from kc_sim.env.aec import raw_env

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = raw_env(players=2, observation="planes")
        b = BatchEnv(1, players=2, observation="planes")
        a.reset(options={"round_seed": 77})
        out = b.reset(np.array([77]))
        for _ in range(40):
            agent = a.agent_selection
            o = a.observe(agent)
            assert a.observation_space(agent).contains(o)
            assert np.array_equal(o["observation"], out.observation[0])
            if a.terminations[agent]:
                break
            act = int(np.flatnonzero(o["action_mask"])[0])
            a.step(act)
            out = b.step(np.array([act]))
            if out.terminated[0]:
                break


@pytest.mark.parametrize("players,rules", [(2, "classic"), (4, "draw_first")])
def test_the_planes_env_passes_pettingzoos_checks(players, rules):
    from pettingzoo.test import api_test, seed_test

    from kc_sim.env.aec import env

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        api_test(env(players=players, rules=rules, observation="planes"), num_cycles=100)
        seed_test(lambda: env(players=players, rules=rules, observation="planes"), num_cycles=50)
