"""The batched compiled environment: the same rounds as the tournament runner and the AEC
env, masks equal to the core's legal set, illegal actions refused, deterministic auto-reset."""

import warnings

import numpy as np
import pytest

from kc_sim.core import layout as L
from kc_sim.core import loop
from kc_sim.core.legal import legal_mask
from kc_sim.core.rng import derive
from kc_sim.env.aec import raw_env
from kc_sim.env.batch import BatchEnv
from kc_sim.errors import UserError
from kc_sim.play.agents.registry import load_agent
from kc_sim.play.driver.runner import play_rounds

PY_AGENT = "agents.examples.my_python_agent:CautiousShedder"


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _core_mask(st):
    out = np.zeros(L.N_ACTIONS, dtype=np.bool_)
    legal_mask(st, out)
    return out


@pytest.mark.parametrize("lineup,opponents,rules", [
    (["greedy", "merger"], {1: "merger"}, "classic"),
    (["merger", "greedy"], {0: "merger"}, "classic,draw=start"),
    (["greedy", "merger", "greedy"], {1: "merger"}, "draw_first"),
    (["greedy", "greedy", "merger", "king-first"], {2: "merger", 3: "king-first"}, "classic,scoring=face"),
])
def test_penalties_equal_the_runner(lineup, opponents, rules):
    """Learner seats play their agent from Python on the env's state and memories, the
    opponents inside the env: every round's penalties are the runner's for its seed."""
    seeds = np.arange(100, 164, dtype=np.int64)
    e = BatchEnv(len(seeds), players=len(lineup), rules=rules, opponents=opponents, auto_reset=False)
    policies = [load_agent(n).policy for n in lineup]
    out = e.reset(seeds)
    penalties = np.full((len(seeds), len(lineup)), -1, dtype=np.int64)
    penalties[out.terminated] = -out.rewards[out.terminated]   # opponents went out before a learner acted
    actions = np.zeros(len(seeds), dtype=np.int64)
    for _ in range(2000):
        for i in range(len(seeds)):
            seat = out.current_player[i]
            if seat >= 0:
                assert seat not in opponents
                actions[i] = policies[seat](e.state[i], seat, e.memory[i, seat])
        out = e.step(actions)
        for i in np.flatnonzero(out.terminated & (penalties[:, 0] < 0)):
            penalties[i] = -out.rewards[i]
        if (penalties[:, 0] >= 0).all():
            break
    assert (penalties >= 0).all()
    rows = play_rounds(lineup, seeds, rules)
    np.testing.assert_array_equal(penalties, rows[:, loop.C_PENALTY:loop.C_PENALTY + len(lineup)])


def _aec_view(aec, players):
    o = aec.observe(aec.agent_selection)
    return o["observation"], o["action_mask"]


@pytest.mark.parametrize("players,rules", [
    (2, "classic"),
    (3, "classic"),
    (4, "draw_first"),
    (3, "classic,draw=if_stuck,must_play_kings=true,scoring=face,layout_kings=to_corner"),
    (5, "classic,decks=2"),
])
def test_same_play_as_the_aec_env(players, rules):
    """The same round seeds and actions: the same observations, masks and rewards at every
    step, auto-reset rounds included (dealt from derive(seed, k)); masks equal the core's."""
    seeds = np.array([3, 17, 99, 12345, 2**40 + 7, 0], dtype=np.int64)
    B = len(seeds)
    e = BatchEnv(B, players=players, rules=rules)
    out = e.reset(seeds)
    aecs = []
    for i in range(B):
        a = raw_env(players=players, rules=rules)
        a.reset(options={"round_seed": int(seeds[i])})
        aecs.append(a)
    ends = 0
    e.sample(rng_seed=5)
    for t in range(1500):
        for i, a in enumerate(aecs):
            obs, mask = _aec_view(a, players)
            assert out.current_player[i] == a.agent_name_mapping[a.agent_selection]
            np.testing.assert_array_equal(out.observation[i], obs, err_msg=f"step {t} env {i}")
            np.testing.assert_array_equal(out.legal_action_mask[i], mask, err_msg=f"step {t} env {i}")
            np.testing.assert_array_equal(out.legal_action_mask[i].astype(bool), _core_mask(e.state[i]))
        actions = e.sample().copy()
        for i in range(B):
            assert out.legal_action_mask[i, actions[i]] == 1
        out = e.step(actions)
        for i, a in enumerate(aecs):
            a.step(int(actions[i]))
            want = [a.rewards[f"player_{s}"] for s in range(players)]
            np.testing.assert_array_equal(out.rewards[i], np.array(want, dtype=np.float32))
            assert out.terminated[i] == a.terminations["player_0"]
            if out.terminated[i]:
                ends += 1
                assert e.round_seeds[i] == derive(int(seeds[i]), int(e.episodes[i]))
                assert (out.rewards[i] <= 0).all() and (out.rewards[i] < 0).any()
                a.reset(options={"round_seed": int(e.round_seeds[i])})
    assert ends >= 3


def test_a_round_over_before_a_learner_acts():
    """Seed 132: merger, first to play, goes out in its first turn. Without auto-reset the
    round is reported by reset(); with it the round is skipped and the next one dealt."""
    e = BatchEnv(1, players=2, opponents={1: "merger"}, auto_reset=False)
    out = e.reset(np.array([132]))
    assert out.terminated[0] and out.current_player[0] == -1 and list(out.rewards[0]) == [-7, 0]
    f = BatchEnv(1, players=2, opponents={1: "merger"})
    out = f.reset(np.array([132]))
    assert not out.terminated[0] and (out.rewards == 0).all() and out.current_player[0] == 0
    assert f.skipped[0] == 1 and f.episodes[0] == 1 and f.round_seeds[0] == derive(132, 1)


def test_masks_and_samples_with_opponents():
    """With opponents playing inside the env the mask is still the core's legal set for the
    learner to act, and sample() draws legal actions only."""
    e = BatchEnv(64, players=3, rules="classic", opponents={0: "greedy", 2: "random"})
    out = e.reset(7)
    ends = 0
    for _ in range(400):
        for i in range(64):
            assert out.current_player[i] == 1 == e.state[i, L.SEAT]
            np.testing.assert_array_equal(out.legal_action_mask[i].astype(bool), _core_mask(e.state[i]))
        a = e.sample()
        assert out.legal_action_mask[np.arange(64), a].all()
        out = e.step(a)
        ends += int(out.terminated.sum())
    assert ends > 10


def test_illegal_action_raises_and_changes_nothing():
    e = BatchEnv(8, players=2, rules="classic", opponents={1: "greedy"})
    e.reset(np.arange(8, dtype=np.int64))
    for _ in range(5):
        e.step(e.sample())
    before = [x.copy() for x in (e.state, e.memory, e.episodes, *e.out)]
    actions = e.sample().copy()
    bad = int(np.flatnonzero(e.out.legal_action_mask[3] == 0)[0])
    actions[3] = bad
    with pytest.raises(ValueError, match=rf"illegal action {bad} in env 3\b"):
        e.step(actions)
    for x, y in zip(before, (e.state, e.memory, e.episodes, *e.out)):
        np.testing.assert_array_equal(x, y)
    actions[3] = 449
    with pytest.raises(ValueError, match="illegal action 449 in env 3"):
        e.step(actions)
    with pytest.raises(ValueError, match="bad actions"):
        e.step(actions[:4])
    e.step(e.sample())                    # still usable
    assert e.out.legal_action_mask[np.arange(8), e.sample()].all()


def test_auto_reset_is_deterministic():
    runs = []
    for _ in range(2):
        e = BatchEnv(16, players=2, rules="classic", opponents={1: "merger"})
        out = e.reset(2024)
        e.sample(rng_seed=9)
        trace = []
        for _ in range(600):
            out = e.step(e.sample())
            trace.append([x.copy() for x in out])
        runs.append((trace, e.round_seeds.copy(), e.episodes.copy()))
    (t1, r1, k1), (t2, r2, k2) = runs
    assert sum(int(s[4].sum()) for s in t1) > 16            # rounds ended and were dealt again
    for a, b in zip(t1, t2):
        for x, y in zip(a, b):
            np.testing.assert_array_equal(x, y)
    np.testing.assert_array_equal(r1, r2)
    np.testing.assert_array_equal(k1, k2)
    assert (k1 > 0).all()
    # reset(S) deals round seeds derive(S, i)
    e = BatchEnv(16, players=2, opponents={1: "merger"})
    e.reset(np.array([derive(2024, i) for i in range(16)], dtype=np.int64))
    f = BatchEnv(16, players=2, opponents={1: "merger"})
    f.reset(2024)
    np.testing.assert_array_equal(e.state, f.state)
    np.testing.assert_array_equal(e.out.observation, f.out.observation)


def test_without_auto_reset_a_finished_env_stays_over():
    e = BatchEnv(4, players=2, rules="classic", auto_reset=False)
    out = e.reset(np.arange(4, dtype=np.int64))
    done_at = {}
    for t in range(3000):
        out = e.step(e.sample())
        for i in np.flatnonzero(out.terminated):
            if i not in done_at:
                done_at[i] = t
                assert (out.rewards[i] < 0).any()
            else:
                assert (out.rewards[i] == 0).all()
        if len(done_at) == 4:
            break
    assert len(done_at) == 4
    assert (out.current_player == -1).all() and not out.legal_action_mask.any()
    assert (out.observation[:, 137] == -1).all()          # to_act: over
    state = e.state.copy()
    out = e.step(np.zeros(4, dtype=np.int64))             # ignored, even when not legal
    np.testing.assert_array_equal(state, e.state)
    assert out.terminated.all()
    e.reset(np.arange(4, dtype=np.int64))
    assert not e.out.terminated.any() and (e.out.current_player >= 0).all()


def test_bad_arguments():
    with pytest.raises(UserError, match="Python agent"):
        BatchEnv(2, players=2, opponents={1: PY_AGENT})
    with pytest.raises(UserError, match="every seat"):
        BatchEnv(2, players=2, opponents={0: "greedy", 1: "greedy"})
    with pytest.raises(UserError, match="opponent seat"):
        BatchEnv(2, players=2, opponents={2: "greedy"})
    with pytest.raises(UserError, match="player count"):
        BatchEnv(2, players=5, rules="classic")
    e = BatchEnv(2, players=2)
    with pytest.raises(UserError, match="reset"):
        e.step(np.zeros(2, dtype=np.int64))
    with pytest.raises(ValueError, match="bad seeds"):
        e.reset(np.arange(3))


def test_a_bad_opponent_raises():
    import numba as nb

    from kc_sim.core.policy import POLICY_SIG
    from kc_sim.play.agents.registry import spec_from_object

    bad = spec_from_object(nb.njit(POLICY_SIG)(lambda st, seat, mem: 1000), "bad")
    e = BatchEnv(4, players=2, opponents={1: bad})
    with pytest.raises(RuntimeError, match=r"opponent 'bad' \(seat 1\) played the illegal action 1000 in env \d"):
        for _ in range(50):
            e.reset(np.arange(4, dtype=np.int64))
            for _ in range(100):
                e.step(e.sample())
