"""Issue 37, item 7, with the default evaluator (``planner``): a candidate that goes out is a
certain win and every other candidate is lower; one decision judged with two seeds agrees
within the intervals; luck and losses add up to each round's result as docs/analysis.md
writes it (the result split), round by round and summed over a run. (The ordering of agents by
error rate is an experiment, ``experiments/judge_ordering.py``, with its figures in
results/README.md.)"""

from __future__ import annotations

import math

import pytest

from kc_sim.core import layout as L
from kc_sim.game.actions import parse_action
from kc_sim.game.rules import parse_rules
from kc_sim.judge.analyse import analyse_file, evaluator_policy
from kc_sim.judge.by_agent import agent_figures
from kc_sim.judge.decisions import judge_decision
from kc_sim.judge.positions import Decision, read_checked, replay
from kc_sim.judge.settings import DEFAULT_EVALUATOR
from kc_sim.play.recording.command import record_rounds
from tests.judge.test_decisions import _going_out_position

_, POLICY = evaluator_policy(DEFAULT_EVALUATOR)


@pytest.fixture(scope="module")
def rounds(tmp_path_factory):
    path = tmp_path_factory.mktemp("valid") / "g.jsonl"
    record_rounds(path, ["planner", "random"], 3, 11, parse_rules("classic"))
    return path


def test_going_out_is_a_certain_win_and_every_other_candidate_lower():
    g = _going_out_position()
    legal = g.legal_actions()
    out = parse_action("5H>N")
    for chosen in (L.STOP, out):
        j = judge_decision(Decision(0, 0, 0, g.state.copy(), legal, chosen), POLICY, seed=7, budget=256)
        win = {c["action"]: c["win"] for c in j.candidates}
        assert win[out] == 100.0 and j.best == out
        others = {a: w for a, w in win.items() if a != out}
        assert others and all(w < 100.0 for w in others.values())
        # the rollouts tell each one apart from going out: its loss's interval lies above 0
        assert all(c["loss_ci"][0] > 0 for c in j.candidates if c["action"] != out)
    assert j.loss == 0 and j.label == ""                     # played, going out loses nothing


def test_one_decision_with_two_seeds_agrees_within_the_intervals(rounds):
    replayed = [replay(i, n, rec) for i, n, rec in read_checked(rounds)]
    free = [d for r in replayed for d in r.decisions if len(d.legal) >= 3]
    assert free
    for d in free[:: max(1, len(free) // 4)][:4]:
        a = judge_decision(d, POLICY, seed=101, budget=256, batch=256)
        b = judge_decision(d, POLICY, seed=202, budget=256, batch=256)
        # the action played: the two intervals of its loss overlap
        assert a.loss_lo <= b.loss_hi and b.loss_lo <= a.loss_hi, (a.loss, a.loss_lo, a.loss_hi, b.loss, b.loss_lo)
        # every candidate's win: within the 95% interval of a difference of two independent estimates
        for ca, cb in zip(a.candidates, b.candidates):
            assert ca["action"] == cb["action"]
            p = (ca["win"] + cb["win"]) / 200
            se = math.sqrt(max(p * (1 - p), 1 / 256) * 2 / 256) * 100
            assert abs(ca["win"] - cb["win"]) <= 1.96 * se + 1e-9, (ca, cb)


def test_luck_and_losses_add_up_to_each_result(rounds):
    """result = expectation at deal + luck (deal and draws) - decision losses + rest, and each
    part is what docs/analysis.md says it is; the run's totals are the sums of the rounds'."""
    rep = analyse_file(rounds, budget=64, seed=3)
    for rnd in rep["rounds"]:
        assert rnd["end"] != "unfinished"
        deal = {x["seat"]: x for x in rnd["luck"]["deal"]}
        for s, seat in rnd["seats"].items():
            s = int(s)
            sp = seat["split"]
            assert sp["result"] == (100.0 if rnd["winner"] == s else 0.0)
            assert sp["expectation"] == pytest.approx(deal[s]["before"], abs=2e-3)
            drawn = sum(x["luck"] for x in rnd["luck"]["draws"] if x["seat"] == s)
            assert sp["luck"] == pytest.approx(deal[s]["luck"] + drawn, abs=0.01)
            lost = sum(d["loss"] for d in rnd["decisions"] if d["seat"] == s and not d["forced"])
            assert sp["decisions"] == pytest.approx(-lost, abs=0.01)
            assert sp["expectation"] + sp["luck"] + sp["decisions"] + sp["rest"] == pytest.approx(sp["result"],
                                                                                                  abs=0.01)
    for s, total in rep["seats"].items():
        parts = [r["seats"][s]["split"] for r in rep["rounds"]]
        for k in ("result", "expectation", "luck", "decisions", "rest"):
            assert total["split"][k] == pytest.approx(sum(p[k] for p in parts), abs=0.01)
    # per agent: the luck per round times the seats is the luck summed over its seats
    figs = agent_figures(rep)
    for name, fig in figs.items():
        mine = [r["seats"][s]["luck"]["total"] for r in rep["rounds"] for s in r["seats"]
                if r["players"][int(s)] == name]
        assert fig["luck"][0] * fig["seats"] == pytest.approx(sum(mine), abs=0.01 * len(mine))
