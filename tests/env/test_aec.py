"""The PettingZoo environment: PettingZoo's own API and seed tests, the observation
layout, rewards, illegal actions, render, and kc-sim agents as policies inside it."""

import warnings

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test  # noqa: E402

from kc_sim.core.rng import derive  # noqa: E402
from kc_sim.env.aec import (
    # noqa: E402
    OBS_HIGH,
    OBS_LOW,
    OBS_SIZE,
    env,
    max_penalty,
    policy_from_agent,
    raw_env,
    split_observation,
)
from kc_sim.play.table.game import IllegalActionError  # noqa: E402
from kc_sim.play.recording.recorded import record_round  # noqa: E402

CASES = [
    (2, "classic"),
    (3, "draw_first"),
    (4, "classic,draw=if_stuck,must_play_kings=true,scoring=face"),
    (6, "classic,decks=2,draw=start"),
]
PY_AGENT = "agents.examples.my_python_agent:CautiousShedder"


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # PettingZoo's advice for envs it does not know by name
        yield


@pytest.mark.parametrize("players,rules", CASES)
def test_pettingzoo_api_test(players, rules):
    api_test(env(players=players, rules=rules, render_mode="ansi"), num_cycles=200)


@pytest.mark.parametrize("players,rules", CASES[:3])
def test_pettingzoo_seed_test(players, rules):
    seed_test(lambda: env(players=players, rules=rules), num_cycles=200)


def test_raw_env_passes_api_test_too():
    api_test(raw_env(players=2, rules="classic,layout_kings=to_corner"), num_cycles=100)


def _play(e, policies, seed=None):
    e.reset(seed=seed)
    final = {}
    for agent in e.agent_iter():
        obs, reward, term, trunc, info = e.last()
        if term or trunc:
            final[agent] = (reward, info)
            e.step(None)
        else:
            e.step(policies[agent](obs, e))
    return final


@pytest.mark.parametrize("names,rules", [
    (["random", "greedy"], "classic"),
    ([PY_AGENT, "king-first", "pile-merger"], "draw_first"),
    (["greedy", PY_AGENT, "random", "greedy", "random"], "decks=2,draw=if_stuck"),
])
def test_agents_as_policies_play_as_in_the_runner(names, rules):
    """Any agent, compiled or Python, plays inside the env exactly as kc-sim plays it."""
    e = env(players=len(names), rules=rules)
    policies = {f"player_{i}": policy_from_agent(n) for i, n in enumerate(names)}
    for episode in range(3):
        final = _play(e, policies, seed=11 if episode == 0 else None)
        raw = e.unwrapped
        assert raw.round_seed == int(derive(11, episode))
        mine = raw.record(names)
        ref = record_round(names, raw.round_seed, rules)
        assert mine["turns"] == ref["turns"] and mine["result"] == ref["result"]
        pens = ref["result"]["penalties"]
        for i in range(len(names)):
            reward, info = final[f"player_{i}"]
            assert reward == -pens[i] and info["penalty"] == pens[i] and info["end"] == ref["result"]["end"]


def test_a_seat_bound_policy_refuses_other_seats():
    e = env(players=2)
    e.reset(seed=3)
    wrong = 1 - e.unwrapped.game.seat
    with pytest.raises(ValueError, match="plays seat"):
        policy_from_agent("greedy", seat=wrong)(None, e)


def test_observation_holds_what_the_seat_sees():
    e = raw_env(players=3, rules="classic")
    e.reset(seed=5)
    pol = policy_from_agent("greedy")
    for _ in range(40):   # a few turns in
        e.step(pol(None, e))
    g = e.game
    for i, agent in enumerate(e.possible_agents):
        o = e.observe(agent)
        assert o["observation"].dtype == np.int8 and o["observation"].shape == (OBS_SIZE,)
        assert o["action_mask"].dtype == np.int8 and o["action_mask"].shape == (449,)
        assert e.observation_space(agent).contains(o)
        parts = split_observation(o)
        assert sorted(np.repeat(np.arange(52), parts["hand"])) == g.hand(i)
        piles = g.piles
        assert list(parts["base"]) == [p[0] if p else -1 for p in piles]
        assert list(parts["top"]) == [p[-1] if p else -1 for p in piles]
        assert list(parts["size"]) == [len(p) for p in piles]
        assert sorted(np.repeat(np.arange(52), parts["table"])) == sorted(c for p in piles for c in p)
        sizes = [len(g.hand((i + r) % 3)) for r in range(3)]
        assert list(parts["hand_sizes"]) == sizes + [-1] * 5
        assert parts["stock"] == len(g.stock)
        assert parts["to_act"] == (g.seat - i) % 3 and parts["dealer"] == (g.dealer - i) % 3
        assert parts["seat"] == i and parts["players"] == 3
        if i == g.seat:
            assert list(np.flatnonzero(o["action_mask"])) == g.legal_actions()
        else:
            assert not o["action_mask"].any() and parts["turn_actions"] == 0 and parts["drew"] == -1


def test_observation_hides_other_hands_and_the_stock_order():
    """Two rounds that differ only in the other hands and the stock look the same to seat 0."""
    from kc_sim.env.obs_vector import fill_observation as _fill_observation
    from kc_sim.play.table.game import Game

    hands = [["KS", "QD", "2C", "7H", "9S", "AD", "4C"], ["3C", "5D", "6H", "8S", "JC", "TD", "2H"]]
    piles = [["8C"], ["9D"], ["4H"], ["KH"]]
    used = {c for h in hands for c in h} | {p[0] for p in piles}
    from kc_sim.game.cards import card_text

    rest = [card_text(c) for c in range(52) if card_text(c) not in used]
    a = Game.from_position(hands, piles, rest)
    swapped = [hands[0], rest[:7]]
    b = Game.from_position(swapped, piles, hands[1] + rest[7:][::-1])
    oa, ob = np.zeros(OBS_SIZE, np.int8), np.zeros(OBS_SIZE, np.int8)
    _fill_observation(a.state, 0, oa)
    _fill_observation(b.state, 0, ob)
    assert np.array_equal(oa, ob)


def test_bounds_and_two_deck_copies():
    assert OBS_LOW.shape == OBS_HIGH.shape == (OBS_SIZE,) and (OBS_LOW < OBS_HIGH).all()
    e = raw_env(players=8, rules="decks=2")
    e.reset(seed=1)
    pol = policy_from_agent("random")
    seen_two = False
    for _ in range(300):
        if e.game.over:
            break
        o = e.observe(e.agent_selection)
        assert e.observation_space(e.agent_selection).contains(o)
        seen_two |= bool((o["observation"][:104] == 2).any())
        e.step(pol(o, e))
    assert seen_two   # both copies of a card counted
    assert e.observe("player_7")["observation"][128 + 7] >= 0   # eight seats, none padded


def test_rewards_are_minus_penalties_at_the_end_only():
    e = env(players=3, rules="classic,scoring=face")
    e.reset(seed=8)
    total = {a: 0.0 for a in e.possible_agents}
    rng = np.random.default_rng(0)
    for agent in e.agent_iter():
        obs, reward, term, trunc, info = e.last()
        total[agent] += reward
        if not (term or trunc):
            assert reward == 0
            legal = np.flatnonzero(obs["action_mask"])
            e.step(int(rng.choice(legal)))
        else:
            e.step(None)
    pens = e.unwrapped.game.penalties
    assert [total[a] for a in e.possible_agents] == [-p for p in pens]
    assert min(pens) == 0 or e.unwrapped.game.end == "blocked"


def test_illegal_actions():
    raw = raw_env(players=2)
    raw.reset(seed=2)
    illegal = int(np.flatnonzero(raw.observe(raw.agent_selection)["action_mask"] == 0)[0])
    with pytest.raises(IllegalActionError):
        raw.step(illegal)
    e = env(players=2)
    e.reset(seed=2)
    offender = e.agent_selection
    e.step(illegal)
    assert all(e.terminations.values())
    assert e.rewards[offender] == -max_penalty("classic") == -88
    assert all(r == 0 for a, r in e.rewards.items() if a != offender)


def test_render_and_bad_arguments():
    e = env(players=2, render_mode="ansi")
    e.reset(seed=4)
    text = e.render()
    for word in ("NW", "NE", "SW", "SE", "stock", "player_0", "player_1", "Hand of seat"):
        assert word in text
    with pytest.raises(ValueError, match="bad player count"):
        raw_env(players=5)
    with pytest.raises(ValueError, match="unknown rule switch"):
        raw_env(rules="colour=red")
    with pytest.raises(ValueError, match="render_mode"):
        raw_env(render_mode="rgb_array")


def test_options_deal_a_given_round():
    names = ["greedy", "random"]
    e = env(players=2)
    pol = {f"player_{i}": policy_from_agent(n) for i, n in enumerate(names)}
    e.reset(options={"round_seed": 1234, "dealer": 0})
    assert e.unwrapped.game.dealer == 0
    for agent in e.agent_iter():
        obs, reward, term, trunc, info = e.last()
        e.step(None if term or trunc else pol[agent](obs, e))
    ref = record_round(names, 1234, "classic", dealer=0)
    assert e.unwrapped.record(names)["turns"] == ref["turns"]


def test_docs_example_random_vs_greedy():
    """The random-vs-greedy example of the README."""
    from kc_sim.env.aec import env as make_env

    e = make_env(players=2, rules="classic")
    policies = {"player_0": policy_from_agent("random"), "player_1": policy_from_agent("greedy")}
    totals = {a: 0.0 for a in e.possible_agents}
    for episode in range(20):
        e.reset(seed=episode)
        for agent in e.agent_iter():
            obs, reward, terminated, truncated, info = e.last()
            totals[agent] += reward
            e.step(None if terminated or truncated else policies[agent](obs, e))
    assert totals["player_1"] > totals["player_0"]   # greedy sheds more than random
