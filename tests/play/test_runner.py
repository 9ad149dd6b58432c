"""The agent-running layer: compiled and Python loops agree, what Python agents see and
when their hooks run, matches, game records, faults, and the agents benchmark."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from agents.greedy import PythonGreedy
from kc_sim.core import loop
from kc_sim.core.bits import lowest
from kc_sim.core.layout import HAND, STOP, TURNS
from kc_sim.core.legal import count_plays, is_legal, nth_play
from kc_sim.core.policy import compiled_policy
from kc_sim.core.rng import derive
from kc_sim.errors import UserError
from kc_sim.game.actions import parse_action
from kc_sim.game.cards import ALL_MASK
from kc_sim.game.rules import parse_rules
from kc_sim.play.driver import runner
from kc_sim.play.agents.interface import AgentSpec, PythonAgent
from kc_sim.play.table.game import Game
from kc_sim.play.table.view import V_HAND, V_LEGAL
from kc_sim.play.agents.registry import load_agent
from kc_sim.play.driver.runner import AgentFault, play_matches, play_rounds
from kc_sim.play.recording.recorded import record_round, record_row
from tests.helpers.records import replay_fault_record

GREEDY, RANDOM, KING, MERGER = (load_agent(n) for n in ("greedy", "random", "king-first", "merger"))
TWIN = AgentSpec("greedy", "Python twin", factory=PythonGreedy)


# --- agents used by the tests ------------------------------------------------------------------

@compiled_policy
def illegal_late(st, seat, mem):
    """First legal play, but an illegal placement (a card not in hand) after turn 4 in the
    rounds whose seat seed is 5 mod 13."""
    if mem[0] % 13 == 5 and st[TURNS] > 4:
        return lowest(~st[HAND + 2 * seat] & ALL_MASK) * 8
    if count_plays(st) > 0:
        return nth_play(st, 0)
    return STOP


@compiled_policy
def raises_late(st, seat, mem):
    """Like illegal_late, but raises instead of playing the illegal action."""
    if mem[0] % 13 == 5 and st[TURNS] > 4:
        raise ValueError("planned failure")
    if count_plays(st) > 0:
        return nth_play(st, 0)
    return STOP


@compiled_policy
def out_of_range(st, seat, mem):
    """Returns 9999, which is no action id."""
    return 9999


class FirstLegal(PythonAgent):
    def act(self, obs):
        return obs.legal[0]


class RandomPy(PythonAgent):
    def act(self, obs):
        return self.rng.choice(obs.legal)


class Spy(PythonAgent):
    """First legal action; keeps every view and every hook call."""

    def __init__(self):
        super().__init__()
        self.views, self.hooks = [], []

    def new_match(self, seat, players, rules):
        self.hooks.append(("match", seat, players))

    def new_round(self, seat, players, rules, seed):
        super().new_round(seat, players, rules, seed)
        self.hooks.append(("round", seat, players, seed))

    def act(self, obs):
        self.views.append(obs)
        return obs.legal_text[0]          # text works as well as ids


def spec(cls, name=None):
    return AgentSpec(name or cls.__name__, "test agent", factory=cls)


def shared(instance):
    """A spec whose factory always returns the same instance (to inspect it afterwards)."""
    return AgentSpec(type(instance).__name__, "test agent", factory=lambda: instance)


# --- the two loops agree ------------------------------------------------------------------------

@pytest.mark.parametrize("rules", ["classic", "draw_first,scoring=face", "decks=2,draw=if_stuck,must_play_kings=true"])
def test_python_loop_plays_the_same_rounds_as_the_compiled_loop(rules):
    agents = [GREEDY, RANDOM, KING, MERGER]
    seeds = np.arange(400) * 3 + 1
    a = play_rounds(agents, seeds, rules)
    b = play_rounds(agents, seeds, rules, engine="python")
    assert (a == b).all() and (a[:, loop.C_SEED] == seeds).all() and (a[:, loop.C_MATCH] == -1).all()


@pytest.mark.parametrize("match", ["to_25", "rounds:3", "eliminate_25"])
def test_matches_agree_between_loops_and_with_the_python_twin(match):
    rules = f"classic,match={match}"
    seeds = np.arange(60) + 500
    a, am = play_matches([GREEDY, RANDOM, GREEDY, MERGER], seeds, rules, match_base=100)
    b, bm = play_matches([GREEDY, RANDOM, GREEDY, MERGER], seeds, rules, match_base=100, engine="python")
    c, cm = play_matches([TWIN, RANDOM, TWIN, MERGER], seeds, rules, match_base=100)
    assert (a == b).all() and (am == bm).all() and (a == c).all() and (am == cm).all()
    assert (am[:, loop.M_SEED] == seeds).all()
    for m in range(len(seeds)):
        rows = a[a[:, loop.C_MATCH] == 100 + m]
        assert len(rows) == am[m, loop.M_ROUNDS]
        assert (rows[:, loop.C_MATCH_ROUND] == np.arange(len(rows))).all()
        pen = np.where(rows[:, loop.C_PENALTY:loop.C_PENALTY + 4] < 0, 0, rows[:, loop.C_PENALTY:loop.C_PENALTY + 4])
        totals = pen.sum(axis=0)
        assert (totals == am[m, loop.M_TOTAL:loop.M_TOTAL + 4]).all()
        if match == "rounds:3":
            assert len(rows) == 3
        if match == "to_25":
            assert totals.max() >= 25 and (totals - pen[-1]).max() < 25
            assert am[m, loop.M_WINNERS] == sum(1 << s for s in range(4) if totals[s] == totals.min())


def test_match_batches_are_split_without_changing_results(monkeypatch):
    seeds = np.arange(40)
    a, am = play_matches([GREEDY, RANDOM, KING], seeds, "classic,match=eliminate_25")
    monkeypatch.setattr(runner, "_ROWS_PER_CALL", 300)   # a few matches per compiled call
    b, bm = play_matches([GREEDY, RANDOM, KING], seeds, "classic,match=eliminate_25")
    assert (a == b).all() and (am == bm).all()


def test_names_rules_text_and_empty_runs():
    rows = play_rounds(["greedy", "merger"], [5, 6, 7], "classic")
    assert rows.shape == (3, loop.ROUND_COLS)
    assert play_rounds(["greedy", "merger"], [], "classic").shape == (0, loop.ROUND_COLS)
    r, m = play_matches(["greedy", "merger"], [], "classic")
    assert r.shape == (0, loop.ROUND_COLS) and m.shape == (0, loop.MATCH_COLS)
    with pytest.raises(UserError, match="compiled loop needs compiled agents"):
        play_rounds([GREEDY, spec(FirstLegal)], [1], "classic", engine="compiled")
    with pytest.raises(UserError, match="bad player count"):
        play_rounds([GREEDY] * 5, [1], "classic")


# --- what a Python agent sees, and its hooks ------------------------------------------------------

def _truth(g):
    """What the seat to act may see, read through Game's own accessors (not the view)."""
    return {"seat": g.seat, "players": g.players, "hand": tuple(g.hand(g.seat)),
            "piles": tuple(tuple(p) for p in g.piles), "stock_size": len(g.stock),
            "hand_sizes": tuple(len(g.hand(s)) for s in range(g.players)), "turn_actions": g.turn_actions,
            "drew": g.drew, "legal": tuple(g.legal_actions()), "legal_text": tuple(g.legal_texts())}


def _replay_views(rec, seat, rules):
    """What ``seat`` may see at each of its decisions, replaying a record."""
    g = Game.from_position(rec["hands"], [rec["table"].get(p, []) for p in ("N", "E", "S", "W", "NE", "SE", "SW",
                                                                           "NW")],
                           rec["stock"], rec["dealer"], rules)
    out = []
    for turn in rec["turns"]:
        for text in turn["actions"] + ["stop"]:
            if g.over:
                break
            if g.seat == seat:
                out.append(_truth(g))
            g.play(text)
    return out


@pytest.mark.parametrize("rules", ["classic", "decks=2,draw=start"])
def test_a_python_agent_sees_exactly_its_observation(rules):
    rs = parse_rules(rules)
    seen = 0
    for seed in range(6):
        spy = Spy()
        players = [GREEDY, shared(spy), RANDOM] + ([MERGER] * 3 if rs.decks == 2 else [])
        rec = record_round(players, seed, rs)
        truth = _replay_views(rec, 1, rs)
        assert len(truth) == len(spy.views)
        seen += len(truth)
        for mine, ref in zip(spy.views, truth):
            for f, value in ref.items():
                assert getattr(mine, f) == value, f
            # nothing hidden: only the visible buffer, the rules and the scores are held
            held = set(vars(mine)) | {k for k in ("_v", "rules", "scores", "legal") if hasattr(mine, k)}
            assert held - {"legal", "legal_text", "hand", "piles", "hand_sizes"} == {"_v", "rules", "scores"}
            assert len(mine._v) == V_LEGAL + len(mine.legal)
            assert mine._v[V_HAND] == sum(1 << c for c in set(mine.hand))
    assert seen > 20


def test_game_observe_is_the_seat_view():
    g = Game(3, "classic", 11)
    for _ in range(60):
        if g.over:
            break
        v = g.observe()
        assert {f: getattr(v, f) for f in _truth(g)} == _truth(g)
        assert "stock" not in repr({**vars(v), **{k: getattr(v, k) for k in ("_v", "rules", "scores", "legal")}})
        g.play(v.legal[0])


def test_hooks_seeds_and_scores_in_matches():
    spy = Spy()
    rounds, matches = play_matches([RANDOM, shared(spy), GREEDY], [3, 4], "classic,match=rounds:2")
    assert [h for h in spy.hooks if h[0] == "match"] == [("match", 1, 3), ("match", 1, 3)]
    round_hooks = [h for h in spy.hooks if h[0] == "round"]
    assert len(round_hooks) == 4
    for h, row in zip(round_hooks, rounds):
        assert h[1:3] == (1, 3) and h[3] == derive(int(row[loop.C_SEED]), loop.SEAT_STREAM + 1)
    # scores so far, by seat, at the spy's decisions
    firsts = {}
    for obs in spy.views:
        firsts.setdefault(obs.scores, obs)
    totals = np.zeros(3, dtype=np.int64)
    expected = []
    for row in rounds:
        if row[loop.C_MATCH_ROUND] == 0:
            totals[:] = 0
        expected.append(tuple(int(x) for x in totals))
        totals += row[loop.C_PENALTY:loop.C_PENALTY + 3]
    assert set(firsts) == set(expected)


def test_python_agent_rng_is_seeded_per_round():
    agents = [spec(RandomPy), spec(RandomPy), GREEDY]
    seeds = np.arange(80)
    whole = play_rounds(agents, seeds, "classic")
    split = np.concatenate([play_rounds(agents, seeds[:37], "classic"), play_rounds(agents, seeds[37:], "classic")])
    assert (whole == split).all()
    assert len({tuple(r[loop.C_PENALTY:loop.C_PENALTY + 3]) for r in whole}) > 10


# --- records ------------------------------------------------------------------------------------

def test_records_of_mixed_rounds_and_match_rows_replay_cleanly():
    from kc_sim.records import check

    agents = [spec(RandomPy, "random-py"), GREEDY, spec(FirstLegal, "first"), MERGER]
    for seed in range(20):
        rec = record_round(agents, seed, "classic")
        assert rec["players"] == ["random-py", "greedy", "first", "pile-merger"]
        assert check.check_record(rec) == []
    rounds, _ = play_matches([GREEDY, RANDOM, KING], [9, 10], "classic,match=eliminate_25", match_base=4)
    for row in rounds:
        rec = record_row([GREEDY, RANDOM, KING], row, "classic,match=eliminate_25")
        assert check.check_record(rec) == []
        assert (rec["match"], rec["round"], rec["seed"]) == (row[loop.C_MATCH], row[loop.C_MATCH_ROUND],
                                                            row[loop.C_SEED])
        pen = [p for p in row[loop.C_PENALTY:loop.C_PENALTY + 3] if p >= 0]
        assert rec["result"]["penalties"] == pen
    rows = play_rounds([GREEDY, RANDOM], [42], "draw_first")
    assert check.check_record(record_row([GREEDY, RANDOM], rows[0], "draw_first")) == []


def test_specs_pickle_by_name():
    spec_ = load_agent("agents.examples.my_python_agent:CautiousShedder")
    back = pickle.loads(pickle.dumps(spec_))
    assert back.factory is spec_.factory and back.name == spec_.name


# --- faults ------------------------------------------------------------------------------------

def _check_fault(e: AgentFault, *, agent, kind_words, tmp_dir):
    msg = str(e)
    assert isinstance(e, UserError) and "\n" not in msg
    assert f"agent {agent!r}" in msg and f"seed {e.seed}" in msg and f"round {e.round}" in msg
    assert f"turn {e.turn}" in msg and kind_words in msg
    assert e.path is not None and e.path.is_file() and str(e.path) in msg
    assert e.path.resolve().parent == tmp_dir.resolve()
    rec, g = replay_fault_record(e.path)
    assert rec["fault"]["agent"] == agent and rec["fault"]["turn"] == e.turn
    return rec, g


def test_compiled_policy_illegal_action(tmp_path):
    seeds = np.arange(200) + 10
    with pytest.raises(AgentFault) as e:
        play_rounds([GREEDY, AgentSpec("illegal", "", policy=illegal_late)], seeds, "classic", fault_dir=tmp_path)
    f = e.value
    assert f.seat == 1 and f.round > 0 and f.seed == seeds[f.round]
    assert derive(f.seed, loop.SEAT_STREAM + 1) % 13 == 5
    rec, g = _check_fault(f, agent="illegal", kind_words="illegal action", tmp_dir=tmp_path)
    assert not is_legal(g.state, parse_action(rec["fault"]["action"]))
    # the Python loop finds the same fault
    with pytest.raises(AgentFault) as e2:
        play_rounds([GREEDY, AgentSpec("illegal", "", policy=illegal_late)], seeds, "classic", fault_dir=tmp_path,
                    engine="python")
    assert str(e2.value) == str(f)


def test_compiled_policy_that_raises_is_found_by_bisection(tmp_path):
    seeds = np.arange(200) + 10
    with pytest.raises(AgentFault) as ill:
        play_rounds([GREEDY, AgentSpec("p", "", policy=illegal_late)], seeds, "classic", fault_dir=tmp_path)
    with pytest.raises(AgentFault) as e:
        play_rounds([GREEDY, AgentSpec("p", "", policy=raises_late)], seeds, "classic", fault_dir=tmp_path)
    f = e.value
    assert (f.round, f.seed, f.turn) == (ill.value.round, ill.value.seed, ill.value.turn)
    _check_fault(f, agent="p", kind_words="raised ValueError: planned failure", tmp_dir=tmp_path)
    # and in matches
    with pytest.raises(AgentFault) as m:
        play_matches([AgentSpec("p", "", policy=raises_late), GREEDY], np.arange(30), "classic", match_base=1000,
                     fault_dir=tmp_path)
    assert m.value.match >= 1000 and "match seed" in str(m.value)
    _check_fault(m.value, agent="p", kind_words="planned failure", tmp_dir=tmp_path)


def test_compiled_policy_returning_no_action(tmp_path):
    with pytest.raises(AgentFault) as e:
        play_matches([GREEDY, AgentSpec("oor", "", policy=out_of_range)], [1, 2], "classic", fault_dir=tmp_path)
    _check_fault(e.value, agent="oor", kind_words="returned 9999, which is not an action", tmp_dir=tmp_path)


class Raiser(PythonAgent):
    def act(self, obs):
        if obs.stock_size < 16:
            raise RuntimeError("oops\nsecond line")
        return obs.legal[0]


class Junk(PythonAgent):
    value = None

    def act(self, obs):
        return self.value if obs.stock_size < 18 else obs.legal[0]


class Cheat(PythonAgent):
    def act(self, obs):
        if obs.stock_size < 18:
            return next(a for a in range(449) if a not in obs.legal)
        return obs.legal[0]


class BadHook(PythonAgent):
    def new_round(self, seat, players, rules, seed):
        raise KeyError("hook")

    def act(self, obs):
        return obs.legal[0]


def test_python_agent_that_raises(tmp_path):
    with pytest.raises(AgentFault) as e:
        play_rounds([GREEDY, spec(Raiser, "raiser")], np.arange(5), "classic", fault_dir=tmp_path)
    _check_fault(e.value, agent="raiser", kind_words="raised RuntimeError: oops second line", tmp_dir=tmp_path)
    assert isinstance(e.value.__cause__, RuntimeError)
    with pytest.raises(AgentFault, match="raised KeyError in new_round"):
        play_rounds([GREEDY, spec(BadHook, "bad-hook")], np.arange(5), "classic", fault_dir=tmp_path)


@pytest.mark.parametrize("value", [None, "foo", "7H>XX", 3.5, 9999, -1, True, [1]])
def test_python_agent_returning_no_action(tmp_path, value):
    cls = type("JunkAgent", (Junk,), {"value": value})
    with pytest.raises(AgentFault) as e:
        play_matches([spec(cls, "junk"), RANDOM], [7], "classic", fault_dir=tmp_path)
    _check_fault(e.value, agent="junk", kind_words="which is not an action", tmp_dir=tmp_path)
    assert e.value.action == repr(value)


def test_python_agent_illegal_action_default_fault_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(AgentFault) as e:
        play_rounds([RANDOM, spec(Cheat, "cheat")], np.arange(5), "classic")
    rec, g = _check_fault(e.value, agent="cheat", kind_words="illegal action", tmp_dir=tmp_path / "kc-sim-faults")
    assert "kc-sim-faults/" in str(e.value)
    assert not is_legal(g.state, parse_action(e.value.action))


def test_record_round_faults_too(tmp_path):
    class Stubborn(PythonAgent):
        def act(self, obs):
            return "KS>NE" if "KS>NE" not in obs.legal_text else "KH>NE"

    with pytest.raises(AgentFault) as e:
        record_round([spec(Stubborn, "stubborn"), GREEDY], 3, "classic", fault_dir=tmp_path)
    _check_fault(e.value, agent="stubborn", kind_words="illegal action", tmp_dir=tmp_path)


# --- the benchmark --------------------------------------------------------------------------

def test_bench_agents_smoke():
    from kc_sim.bench.agents import bench_agents

    rows = bench_agents(rounds=3000, python_rounds=100)
    assert [r["agent"] for r in rows] == ["random", "greedy", "king-first", "pile-merger", "planner",
                                          "python-first-legal"]
    for r in rows:
        assert r["rounds_per_s"] > 0 and r["kind"] in ("compiled", "python") and r["rounds"] in (3000, 100)
