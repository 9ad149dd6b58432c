"""The one environment step (kc_sim.env.step): the finished round, the illegal action, rewards
and what it reports about turns and draws, checked against the Python step API
(Game.play) on random rounds of every draw timing; each adapter's illegal-action rule; the
versioned names; the encoding check of stored models."""

import numpy as np
import pytest

pytest.importorskip("pettingzoo")

from kc_sim.core import layout as L  # noqa: E402
from kc_sim.env.step import (  # noqa: E402
    FINISHED,
    I_CLOSED,
    I_DRAWER,
    I_DRAWN,
    I_TURN_DREW,
    ILLEGAL,
    INFO_SIZE,
    STEPPED,
    IllegalActionError,
    env_step,
    forfeit_reward,
    observe,
)
from kc_sim.env.versions import AEC_NAME, GYM_ID, OPENSPIEL_NAME  # noqa: E402
from kc_sim.net.encodings import ENCODINGS, check_encoding, encoding_id  # noqa: E402
from kc_sim.errors import UserError  # noqa: E402
from kc_sim.game.rules import parse_rules  # noqa: E402
from kc_sim.play.table.game import Game  # noqa: E402


@pytest.mark.parametrize("rules", ["classic", "classic,draw=start", "classic,draw=if_stuck,decks=2",
                                   "draw_first,must_play_kings=true"])
def test_env_step_is_game_play(rules):
    """Random rounds stepped by env_step and by Game.play side by side: the same states, the
    same (closed, drew) for the records, each draw reported to the seat whose hand grew, and
    the rewards minus the penalties on the last step only."""
    rng = np.random.default_rng(7)
    players = 3
    rewards = np.zeros(L.MAX_SEATS)
    info = np.zeros(INFO_SIZE, dtype=np.int64)
    draws = 0
    for seed in range(12):
        ours, ref = Game(players, rules, seed), Game(players, rules, seed)
        while not ref.over:
            legal = ref.legal_actions()
            a = legal[rng.integers(len(legal))] if rng.random() < 0.8 or len(legal) == 1 else legal[-1]
            before = ours.state[L.HAND_N:L.HAND_N + players].copy()
            closed, drew = ref.play(a)
            assert env_step(ours.state, a, rewards, info) == STEPPED
            np.testing.assert_array_equal(ours.state, ref.state)
            assert (bool(info[I_CLOSED]), int(info[I_TURN_DREW])) == (closed, -1 if drew is None else drew)
            grew = np.flatnonzero(ours.state[L.HAND_N:L.HAND_N + players] > before)
            if info[I_DRAWER] >= 0:
                draws += 1
                assert list(grew) == [info[I_DRAWER]] and info[I_DRAWN] in ours.hand(int(info[I_DRAWER]))
            else:
                assert len(grew) == 0
            if ref.over:
                np.testing.assert_array_equal(rewards[:players], [-p for p in ref.penalties])
            else:
                assert not rewards.any()
        # a finished round takes no step
        st = ours.state.copy()
        assert env_step(ours.state, L.STOP, rewards, info) == FINISHED
        np.testing.assert_array_equal(ours.state, st)
        assert not rewards.any() and info[I_DRAWER] == -1
    assert draws > 0


def test_illegal_action_changes_nothing_and_observe():
    g = Game(2, "classic", 3)
    mask = g.legal_mask()
    rewards = np.zeros(L.MAX_SEATS)
    info = np.zeros(INFO_SIZE, dtype=np.int64)
    for a in (int(np.flatnonzero(~mask)[0]), -1, 449, 10**6):
        st = g.state.copy()
        assert env_step(g.state, a, rewards, info) == ILLEGAL
        np.testing.assert_array_equal(g.state, st)
    obs = np.zeros(143, dtype=np.int8)
    m = np.zeros(449, dtype=np.int8)
    observe(g.state, g.seat, obs, m)
    np.testing.assert_array_equal(m.astype(bool), mask)
    observe(g.state, 1 - g.seat, obs, m)          # not its turn: no legal actions shown
    assert not m.any()


def test_every_adapter_raises_the_one_error_or_follows_its_convention():
    from kc_sim.env.aec import env, raw_env
    from kc_sim.env.batch import BatchEnv
    from kc_sim.env.gym_env import KcEnv, KcVectorEnv

    assert issubclass(IllegalActionError, ValueError)
    b = BatchEnv(2, opponents={1: "greedy"})
    out = b.reset(5)
    bad = np.array([int(np.flatnonzero(out.legal_action_mask[i] == 0)[0]) for i in range(2)])
    with pytest.raises(IllegalActionError, match="no env was stepped"):
        b.step(bad)
    v = KcVectorEnv(2, opponents="greedy")
    v.reset(seed=1)
    with pytest.raises(IllegalActionError):
        v.step(np.array([449, 449]))
    with pytest.raises(IllegalActionError):
        e = KcEnv(opponents="greedy")
        e.reset(seed=1)
        e.step(449)
    e = KcEnv(opponents="greedy", illegal="lose")
    e.reset(seed=1)
    assert e.step(449)[1:4] == (-1.0, True, False)
    raw = raw_env()
    raw.reset(seed=2)
    with pytest.raises(IllegalActionError, match="illegal action"):
        raw.step(449)
    w = env()
    w.reset(seed=2)
    first = w.agent_selection
    w.step(int(np.flatnonzero(w.observe(first)["action_mask"] == 0)[0]))
    assert w.rewards[first] == forfeit_reward(parse_rules("classic")) == -88.0


def test_openspiel_apply_of_an_illegal_action_raises():
    pytest.importorskip("pyspiel")
    from kc_sim.env import openspiel_game as og

    state = og.load(players=2).new_initial_state()
    state.apply_action(3)
    illegal = next(a for a in range(449) if a not in state.legal_actions())
    with pytest.raises(Exception, match="illegal action"):
        state.apply_action(illegal)


def test_versioned_names():
    import gymnasium

    from kc_sim.env.aec import raw_env
    from kc_sim.env.gym_env import KcEnv

    assert AEC_NAME == "kings_in_the_corner_v1" == raw_env.metadata["name"]
    e = gymnasium.make(GYM_ID, opponents="greedy")
    assert isinstance(e.unwrapped, KcEnv)
    pyspiel = pytest.importorskip("pyspiel")
    import kc_sim.env.openspiel_game  # noqa: F401 - registers the game

    assert pyspiel.load_game(f"{OPENSPIEL_NAME}(players=3)").num_players() == 3


def test_check_encoding():
    for name in ENCODINGS:
        assert check_encoding(encoding_id(name), "m") == name
    assert check_encoding("planes", "m") == "planes"            # stored before versions: version 1
    with pytest.raises(UserError, match="trained on the encoding planes/2"):
        check_encoding("planes/2", "m.zip")
    with pytest.raises(UserError, match="unknown observation encoding"):
        check_encoding("pixels/1", "m.zip")
    with pytest.raises(UserError, match="bad encoding version"):
        check_encoding("planes/x", "m.zip")
