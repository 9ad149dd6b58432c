"""Names and lines that say what happened: the folder of an --until run, why a run plays
more rounds than asked, how shared match wins count, and two agents that play identically."""

from __future__ import annotations

from pathlib import Path

from kc_sim.cli.tournament import final_line, format_summary
from kc_sim.tournament.options import TournamentOptions
from kc_sim.tournament.plan import make_plan
from kc_sim.tournament.run import run_tournament


def _plan(**kw):
    return make_plan(TournamentOptions.create(["greedy", "random"], **kw))


def test_an_until_run_is_named_by_its_rule_and_cap():
    plan = _plan(max_rounds=2_000_000, until="decided")
    assert plan.out == Path("results/greedy-random_2p_until-decided-max2000000r_s0")
    other = _plan(max_rounds=2_000_000, until="decided", precision="0.5pp")
    assert other.out.name.startswith("greedy-random_2p_until-decided-max2000000r-") and other.out != plan.out
    assert _plan(rounds=1000).out.name == "greedy-random_2p_1000r_s0"


def test_the_final_line_says_why_it_played_more(tmp_path):
    res = run_tournament(["greedy", "random", "merger"], players=3, rounds=100, seed=1, jobs=1, quiet=True,
                         out=tmp_path / "r")
    line = final_line(res)
    assert line.startswith("102 rounds (100 asked for, rounded up to whole deals: 17 deals x 6 seatings) in ")
    exact = run_tournament(["greedy", "random"], rounds=100, jobs=1, quiet=True, out=tmp_path / "e")
    assert "asked for" not in final_line(exact)


def test_match_wins_and_identical_agents_are_explained(tmp_path):
    res = run_tournament(["greedy", "king-first", "random"], players=2, matches=60, rules="match=rounds:2", seed=2,
                         jobs=1, quiet=True, out=tmp_path / "m")
    text = format_summary(res.summary)
    assert "a shared win (equal lowest totals) counts as a win for every agent that shares it" in text
    assert "greedy and king-first played identically: level in every deal" in text
    row = res.summary[(res.summary["agent"] == "greedy") & (res.summary["opponent"] == "king-first")].iloc[0]
    assert row["level"] and row["penalty_diff"] == 0 and row["diff_lo"] < 0 < row["diff_hi"]   # rare deals may differ
    assert "intervals: 95%, clustered by deal (" in text
