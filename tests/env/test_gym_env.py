"""The Gymnasium environments (kc_sim.env.gym_env) over the batched core: Gymnasium's own
checker, the vector API and its wrappers, the same rounds as the batched env and the AEC
env, rewards from the penalties, masks where sb3-contrib looks for them."""

from __future__ import annotations

import numpy as np
import pytest

gymnasium = pytest.importorskip("gymnasium")

from gymnasium.utils.env_checker import check_env  # noqa: E402
from gymnasium.wrappers.vector import RecordEpisodeStatistics  # noqa: E402

from kc_sim.core import layout as L  # noqa: E402
from kc_sim.env.batch import BatchEnv  # noqa: E402
from kc_sim.env.gym_env import KcEnv, KcVectorEnv, opponent_seats  # noqa: E402
from kc_sim.env.obs_vector import OBS_SIZE, fill_observation, vector_from_view  # noqa: E402
from kc_sim.errors import UserError  # noqa: E402
from kc_sim.play.table.view import SeatView  # noqa: E402


@pytest.mark.parametrize("players,observation", [(2, "planes"), (2, "vector"), (4, "planes")])
def test_gymnasium_check_env(players, observation):
    check_env(KcEnv(players=players, opponents="greedy", observation=observation, illegal="lose"),
              skip_render_check=True)


def test_illegal_action_raises_or_loses():
    e = KcEnv(opponents="greedy")
    obs, info = e.reset(seed=3)
    bad = int(np.flatnonzero(~info["action_mask"])[0])
    with pytest.raises(ValueError, match="illegal action"):
        e.step(bad)
    e = KcEnv(opponents="greedy", illegal="lose")
    e.reset(seed=3)
    _, reward, terminated, truncated, info = e.step(bad)
    assert (reward, terminated, truncated, info["illegal"]) == (-1.0, True, False, True)
    with pytest.raises(UserError, match="call reset"):
        e.step(0)


def _play(venv, steps, rng_seed=7):
    """Random legal actions; every returned array copied."""
    rng = np.random.default_rng(rng_seed)
    out = []
    obs, info = venv.reset(seed=11)
    out.append((obs, info["action_mask"]))
    for _ in range(steps):
        mask = venv.action_masks()
        assert (mask == info["action_mask"]).all()
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in mask])
        obs, reward, term, trunc, info = venv.step(actions)
        assert obs in venv.observation_space and not trunc.any()
        out.append((obs, reward, term, info["round_seed"]))
    return out


def test_vector_env_is_reproducible_and_returns_fresh_arrays():
    a = _play(KcVectorEnv(8, players=3, opponents="greedy,pile-merger"), 150)
    b = _play(KcVectorEnv(8, players=3, opponents="greedy,pile-merger"), 150)
    for x, y in zip(a, b):
        for u, v in zip(x, y):
            assert np.array_equal(u, v)
    assert not np.shares_memory(a[1][0], a[2][0])


def test_vector_env_rounds_equal_the_batched_env():
    """Env i deals derive(seed, i) as BatchEnv does; observations, masks and ends agree step by step."""
    venv = KcVectorEnv(16, players=2, opponents="greedy", observation="vector")
    batch = BatchEnv(16, players=2, opponents={1: "greedy"})
    obs, info = venv.reset(seed=5)
    out = batch.reset(5)
    for _ in range(300):
        assert np.array_equal(obs, out.observation) and np.array_equal(info["action_mask"], out.legal_action_mask)
        actions = batch.sample().copy()
        obs, reward, term, _, info = venv.step(actions)
        out = batch.step(actions)
        assert np.array_equal(term, out.terminated)
        assert np.array_equal(info["round_seed"], batch.round_seeds)


def test_rewards_follow_the_penalties():
    """win: +1/-1/0 per opponent beaten/behind/tied, averaged; penalty: -own / max penalty."""
    seen = 0
    for kind in ("win", "penalty"):
        venv = KcVectorEnv(32, players=4, opponents="random", reward=kind)
        venv.reset(seed=2)
        for _ in range(400):
            _, reward, term, _, info = venv.step(venv.sample())
            for i in np.flatnonzero(term):
                pen = info["final_info"]["penalties"][i]
                if kind == "win":
                    expect = (np.sum(pen[1:] > pen[0]) - np.sum(pen[1:] < pen[0])) / 3
                else:
                    expect = -pen[0] / 88
                assert reward[i] == pytest.approx(expect)
                seen += 1
            assert (reward[~term] == 0).all()
    assert seen > 100


def test_shaped_reward_is_win_plus_a_telescoping_potential():
    """shaped: every step pays Φ(after) − Φ(before), Φ = (the opponents' mean hand penalty − the
    learner's) / max penalty and 0 once over; so a round's rewards add up to win − Φ(first decision)."""
    from kc_sim.core.step import hand_penalty

    def phi(st):
        return (np.mean([hand_penalty(st, s) for s in (1, 2)]) - hand_penalty(st, 0)) / 88

    shaped = KcVectorEnv(16, players=3, opponents="greedy", reward="shaped")
    win = KcVectorEnv(16, players=3, opponents="greedy", reward="win")
    shaped.reset(seed=4)
    win.reset(seed=4)
    first = np.array([phi(st) for st in shaped.batch.state])
    total = np.zeros(16)
    checked = 0
    for _ in range(600):
        before = np.array([phi(st) for st in shaped.batch.state])
        actions = shaped.sample()
        _, r, term, _, _ = shaped.step(actions)
        _, w, term_w, _, _ = win.step(actions)
        assert np.array_equal(term, term_w)
        after = np.array([0.0 if t else phi(st) for st, t in zip(shaped.batch.state, term)])
        assert r == pytest.approx(w + after - before, abs=1e-6)
        total += r
        for i in np.flatnonzero(term):
            assert total[i] == pytest.approx(w[i] - first[i], abs=1e-5)
            checked += 1
            total[i] = 0
            first[i] = phi(shaped.batch.state[i])          # the next round's first decision
    assert checked > 50


def test_gymnasium_vector_wrappers_count_rounds():
    venv = RecordEpisodeStatistics(KcVectorEnv(8, players=2, opponents="greedy"))
    venv.reset(seed=1)
    finished = 0
    for _ in range(200):
        _, _, term, _, info = venv.step(venv.unwrapped.sample())
        if term.any():
            assert (info["episode"]["l"][term] > 0).all()
            finished += int(term.sum())
    assert finished > 10


def test_kc_env_round_equals_the_aec_env():
    """KcEnv's round for a round seed is the AEC env's round for that seed (the learner's views)."""
    pytest.importorskip("pettingzoo")
    from kc_sim.env.aec import env as aec_env

    e = KcEnv(players=2, opponents="random", observation="vector")
    for s in (3, 8, 21):
        obs, info = e.reset(options={"round_seed": s})
        aec = aec_env(players=2)
        aec.reset(options={"round_seed": s})
        assert aec.game.seat in (0, 1)
        st = aec.game.state
        if st[L.SEAT] == 0:          # both start from the same deal; the learner acts first here
            ref = np.zeros(OBS_SIZE, np.int8)
            fill_observation(st, 0, ref)
            assert np.array_equal(obs, ref)
            assert np.array_equal(info["action_mask"], aec.game.legal_mask().astype(bool))


def test_vector_from_view_equals_the_core_observation():
    """What a Python agent is shown gives the env's observation exactly (so sb3 agents see what they trained on)."""
    from kc_sim.play.table.game import Game

    rng = np.random.default_rng(0)
    n = 0
    for rules, players in (("classic", 2), ("classic", 4), ("classic,decks=2", 6), ("draw=start", 3)):
        for seed in range(6):
            g = Game(players=players, rules=rules, seed=seed)
            while not g.over:
                ref = np.zeros(OBS_SIZE, np.int8)
                fill_observation(g.state, g.seat, ref)
                assert np.array_equal(vector_from_view(SeatView.from_game(g)), ref)
                g.play(int(rng.choice(g.legal_actions())))
                n += 1
    assert n > 500


def test_bad_settings_are_one_line_errors():
    with pytest.raises(UserError, match="one name, or 2"):
        opponent_seats("greedy,random,random", 3, 0)
    with pytest.raises(UserError, match="bad seat"):
        KcVectorEnv(4, players=2, seat=2)
    with pytest.raises(UserError, match="bad reward"):
        KcVectorEnv(4, reward="score")
    with pytest.raises(UserError, match="bad observation"):
        KcVectorEnv(4, observation="pixels")
    with pytest.raises(UserError, match="Python agent"):
        KcVectorEnv(4, opponents="tests/helpers/agents/buggy.py:Buggy")
