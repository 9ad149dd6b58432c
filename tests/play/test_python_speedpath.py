"""The Python loop's fast path keeps the contract: views built over an agent's own
buffer show their decision even when kept past ``act``, hold nothing of another seat,
and the faults are the same as the plain path's (out-of-range and oversized ints,
numpy ints, the decision limit)."""

from __future__ import annotations

import json
import weakref

import numpy as np
import pytest

from kc_sim.core import loop
from kc_sim.play.driver import python_loop
from kc_sim.play.agents.interface import AgentSpec, PythonAgent
from kc_sim.play.table.game import Game
from kc_sim.play.table.view import V_HAND, V_LEGAL, V_NLEGAL, SeatView
from kc_sim.play.agents.registry import load_agent
from kc_sim.play.driver.runner import AgentFault, play_matches, play_rounds
from kc_sim.play.recording.recorded import record_round

GREEDY, RANDOM = load_agent("greedy"), load_agent("random")
FIELDS = ("seat", "players", "hand", "piles", "tops", "bases", "stock_size", "hand_sizes", "turn_actions", "drew",
          "legal", "legal_text", "hand_mask", "hand_mask2", "pile_masks", "scores")


def spec(cls, name=None):
    return AgentSpec(name or cls.__name__, "test agent", factory=cls)


def shared(instance):
    return AgentSpec(type(instance).__name__, "test agent", factory=lambda: instance)


def _fields(obs) -> dict:
    return {f: getattr(obs, f) for f in FIELDS}


class Keeper(PythonAgent):
    """Plays randomly; reads every field of every view during ``act`` (the truth), keeps
    every other view unread, and a weak reference to all."""

    def __init__(self):
        super().__init__()
        self.truth, self.kept, self.weak = [], [], []

    def act(self, obs):
        i = len(self.truth)
        if i % 2:
            self.kept.append((i, obs))
            self.truth.append(None)
            fresh = SeatView.from_state(self.state, obs.rules, obs.scores)
            self.truth[i] = _fields(fresh)
        else:
            self.truth.append(_fields(obs))
            assert obs._v[V_HAND] == obs.hand_mask
            # the buffer holds this decision's legal ids and nothing after them
            n = obs._v[V_NLEGAL]
            assert n == len(obs.legal) and all(x == 0 for x in list(obs._v)[V_LEGAL + n:])
        self.weak.append(weakref.ref(obs))
        return self.rng.choice(obs.legal)


@pytest.mark.parametrize("rules", ["classic", "decks=2,draw=start", "draw=if_stuck,must_play_kings=true"])
def test_kept_views_show_their_own_decision(rules, monkeypatch):
    keepers = [Keeper(), Keeper()]
    real_play = python_loop.PythonLoop.play

    def play(self, *args):               # hand the keepers the live state (only the test peeks)
        for k in keepers:
            k.state = self.st
        return real_play(self, *args)

    monkeypatch.setattr(python_loop.PythonLoop, "play", play)
    players = [shared(keepers[0]), GREEDY, shared(keepers[1])] + ([RANDOM] * 3 if "decks=2" in rules else [])
    play_rounds(players, np.arange(12), rules)
    for k in keepers:
        assert len(k.kept) > 20
        for i, obs in k.kept:
            assert len(obs._v) == V_LEGAL + len(obs.legal)          # its own copy, not the loop's buffer
            assert _fields(obs) == k.truth[i]
        # the unkept views are gone, as before (nothing holds them)
        assert all(w() is None for i, w in enumerate(k.weak) if i % 2 == 0)


def test_views_equal_views_from_the_state():
    seen = []

    class Both(PythonAgent):
        def act(self, obs):
            seen.append(_fields(obs))
            return obs.legal[len(obs.legal) // 2]

    rec = record_round([spec(Both), spec(Both), spec(Both), spec(Both)], 3, "classic")
    g = Game.from_position(rec["hands"], [rec["table"].get(p, []) for p in ("N", "E", "S", "W", "NE", "SE", "SW",
                                                                           "NW")], rec["stock"], rec["dealer"],
                           "classic")
    i = 0
    for turn in rec["turns"]:
        for text in turn["actions"] + ["stop"]:
            if g.over:
                break
            assert _fields(SeatView.from_game(g, (0,) * 4)) == seen[i]
            i += 1
            g.play(text)
    assert i == len(seen) > 30


class Value(PythonAgent):
    """Returns ``value(obs)`` once the stock is below 18 cards."""

    value = staticmethod(lambda obs: obs.legal[0])

    def act(self, obs):
        return type(self).value(obs) if obs.stock_size < 18 else obs.legal[0]


@pytest.mark.parametrize("value", [449, -2, 2 ** 63, 2 ** 70, -(2 ** 64)])
def test_out_of_range_ints_are_no_action(tmp_path, value):
    cls = type("Big", (Value,), {"value": staticmethod(lambda obs: value)})
    with pytest.raises(AgentFault, match="which is not an action") as e:
        play_rounds([spec(cls, "big"), RANDOM], [7], "classic", fault_dir=tmp_path)
    assert e.value.action == repr(value)
    rec = json.loads(e.value.path.read_text().splitlines()[0])
    assert rec["result"]["end"] == "unfinished"


def test_numpy_and_text_actions_play_like_ints():
    as_np = type("Np", (Value,), {"value": staticmethod(lambda obs: np.int64(obs.legal[-1]))})
    as_text = type("Text", (Value,), {"value": staticmethod(lambda obs: obs.legal_text[-1])})
    as_int = type("Int", (Value,), {"value": staticmethod(lambda obs: obs.legal[-1])})
    rows = [play_rounds([spec(c), RANDOM, spec(c)], np.arange(20), "classic") for c in (as_np, as_text, as_int)]
    assert (rows[0] == rows[2]).all() and (rows[1] == rows[2]).all()


class Counter(PythonAgent):
    calls = 0

    def act(self, obs):
        type(self).calls += 1
        return obs.legal[0]


@pytest.mark.parametrize("engine_seat", ["python", "compiled"])
def test_decision_limit(tmp_path, monkeypatch, engine_seat):
    """At the decision limit the agent still decides once more, then the round stops with
    the limit's decisions applied, as the Python loop always did."""
    monkeypatch.setattr(loop, "MAX_DECISIONS", 30)
    Counter.calls = 0
    other = spec(Counter) if engine_seat == "python" else GREEDY
    with pytest.raises(AgentFault, match="passed 30 decisions") as e:
        play_rounds([spec(Counter), other], [5], "classic", fault_dir=tmp_path)
    rec = json.loads(e.value.path.read_text().splitlines()[0])
    applied = sum(len(t["actions"]) for t in rec["turns"]) + len(rec["turns"]) - 1
    assert applied == 30
    if engine_seat == "python":
        assert Counter.calls == 31
    # a round that ends within the limit is no fault
    monkeypatch.setattr(loop, "MAX_DECISIONS", 20000)
    play_rounds([spec(Counter), other], [5], "classic")


def test_matches_with_python_agents_changing_seats():
    """Under eliminate_25 the round seats of the match seats change; every view is the
    seat's own (its buffer follows the match seat)."""
    class Check(PythonAgent):
        def act(self, obs):
            assert obs._v[V_HAND] == obs.hand_mask == sum(1 << c for c in set(obs.hand))
            return obs.legal[0]

    rules = "decks=2,match=eliminate_25"
    r1, m1 = play_matches([spec(Check), RANDOM, spec(Check), GREEDY, spec(Check)], [1, 2, 3], rules)
    r2, m2 = play_matches([spec(Counter), RANDOM, spec(Counter), GREEDY, spec(Counter)], [1, 2, 3], rules)
    assert len(r1) > 3 * 2
    assert (r1 == r2).all() and (m1 == m2).all()
