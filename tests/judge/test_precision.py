"""``judge_decision(within=P)``: worlds are spent until the loss of the action played is known
within P points either side (what ``kc-sim bench --judge`` times), not by the stopping rule."""

from __future__ import annotations

from kc_sim.judge.decisions import judge_decision
from kc_sim.judge.positions import replay
from kc_sim.play.agents.registry import load_agent
from kc_sim.play.recording.recorded import record_round


def _free_decisions(n: int):
    rec = record_round(["planner", "greedy"], 77, "classic")
    return [d for d in replay(0, 1, rec).decisions if not d.forced][:n]


def test_a_decision_is_judged_to_the_precision_asked_or_to_the_budget():
    policy = load_agent("planner").policy
    for d in _free_decisions(6):
        for within in (8.0, 3.0):
            j = judge_decision(d, policy, seed=3, budget=4096, within=within)
            assert (j.loss_hi - j.loss_lo) / 2 <= within + 1e-9 or j.worlds == 4096
        # a finer precision never spends fewer worlds on the same decision
        assert judge_decision(d, policy, seed=3, budget=4096, within=3.0).worlds >= \
            judge_decision(d, policy, seed=3, budget=4096, within=8.0).worlds
