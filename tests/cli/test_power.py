"""``kc-sim power``: rounds needed for a difference, from a run folder or a pilot run it
makes itself; one line and exit 2 on bad input."""

import math
import warnings

import pytest

import numpy as np

from kc_sim.analysis.power import (
    deals_needed,
    parse_diff,
    power_from_run,
    simulated_deals,
    t_power,
    z_power,
)
from kc_sim.analysis.variance import ScoreSample, run_adjusted
from kc_sim.cli import root
from kc_sim.tournament.options import TournamentOptions
from kc_sim.tournament.plan import make_plan
from kc_sim.tournament.run import run_tournament


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("power") / "run"
    run_tournament(["greedy", "random"], players=2, rounds=6000, seed=2, out=out, jobs=1, backend="sequential",
                   quiet=True)
    return out


def test_formula():
    assert z_power() == pytest.approx(1.959964 + 0.841621, abs=1e-5)
    # sd 0.15, 0.5pp: (2.8016 * 0.15 / 0.005)^2 = 7063.9 -> 7064 deals with normal quantiles; Student's
    # t on 7,000 deals adds two
    assert deals_needed(0.15, 0.005) == 7066
    n = deals_needed(0.15, 0.01)
    assert n == math.ceil((t_power(n - 1) * 0.15 / 0.01) ** 2) and 1766 <= n <= 1768
    # few deals: t's quantiles are noticeably wider than the normal ones
    assert deals_needed(0.2, 0.1) == 34 > math.ceil((z_power() * 0.2 / 0.1) ** 2)
    assert parse_diff("0.5pp") == parse_diff("0.5%") == parse_diff("0.005") == pytest.approx(0.005)


def test_short_runs_are_sized_by_simulation():
    """A per-deal score level in most deals (0.5 in 90% of them, +-0.3 in the rest): the
    simulated size has its power when checked on other draws with scipy's t test (within the
    steps of a lattice: with three values per deal the power goes 0.79, 0.83, 0.82 at 80, 83
    and 86 deals); for normal scores it is about the formula's size."""
    from scipy import stats

    rng = np.random.default_rng(3)
    y = np.where(rng.random(5000) < 0.9, 0.5, 0.5 + rng.choice([-0.3, 0.3], 5000))
    diff = 0.03
    n = simulated_deals(y, diff)
    assert 40 < n < 200
    x = y[rng.integers(0, len(y), (4000, n))] - y.mean() + 0.5 + diff
    with warnings.catch_warnings():             # a run of level deals only: no t statistic
        warnings.simplefilter("ignore", RuntimeWarning)
        p = stats.ttest_1samp(x, 0.5, axis=1).pvalue
    found = np.mean(np.nan_to_num(p, nan=1.0) < 0.05)
    assert 0.78 < found < 0.86, (n, found)
    normal = rng.normal(0.5, 0.1, 5000)
    assert abs(simulated_deals(normal, 0.02) / deals_needed(float(normal.std()), 0.02) - 1) < 0.05


def test_the_score_sample_is_uniform_bounded_and_repeatable():
    a, b = ScoreSample(cap=1000, seed=1), ScoreSample(cap=1000, seed=1)
    for start in range(0, 100_000, 7_000):
        a.add(np.arange(start, min(start + 7_000, 100_000)))
        b.add(np.arange(start, min(start + 7_000, 100_000)))
    assert len(a.values) == 1000 and a.seen == 100_000 and np.array_equal(a.values, b.values)
    assert 40_000 < a.values.mean() < 60_000 and len(np.unique(a.values)) == 1000


def test_power_of_a_run_folder(run_dir, capsys):
    assert root.main(["power", str(run_dir), "--diff", "1pp"]) == 0
    text = capsys.readouterr().out
    est = run_adjusted(run_dir)[0].est
    rounds = 2 * deals_needed(est.sd, 0.01)
    rounds_cv = 2 * deals_needed(est.sd / math.sqrt(est.factor), 0.01)
    line = next(x for x in text.splitlines() if x.startswith("greedy vs random"))
    assert f"{rounds:,d}" in line and f"{rounds_cv:,d}" in line
    assert "to detect a 1pp difference" in text and "measured on 3,000 deals" in text
    assert f"kc-sim tournament --agents greedy,random --players 2 --rounds {rounds}" in text


def test_power_sizes_the_whole_run_of_several_agents(tmp_path, capsys):
    """4 agents at 3 seats: 4 line-ups x 6 seatings = 24 rounds per deal, of which a pair sits
    together in 12: --rounds counts all 24, and the tournament of that size plays exactly the
    deals asked for."""
    out = tmp_path / "four"
    run_tournament(["greedy", "random", "merger", "king-first"], players=3, rounds=4800, seed=3, out=out, jobs=1,
                   backend="sequential", quiet=True)
    assert root.main(["power", str(out), "--diff", "3pp"]) == 0
    text = capsys.readouterr().out
    assert "4 line-ups x 6 seatings = 24 rounds per deal" in text and "sits together in 12 of them" in text
    rows = {f"{r.a} vs {r.b}": r for r in power_from_run(out, 0.03)}
    worst = max(rows.values(), key=lambda r: r.deals)
    assert all(r.rounds == 24 * r.deals and r.rounds_together == 12 * r.deals for r in rows.values())
    cmd = next(x for x in text.splitlines() if x.startswith("to decide every pair"))
    assert cmd.endswith(f"--players 3 --rounds {worst.rounds}")
    plan = make_plan(TournamentOptions.create(["greedy", "random", "merger", "king-first"], players=3,
                                              rounds=worst.rounds))
    assert plan.schedule.groups == worst.deals and plan.schedule.units == worst.rounds


def test_pilot_run(tmp_path, capsys):
    assert root.main(["power", "--agents", "greedy,random", "--pilot-rounds", "2000", "--diff", "2pp",
                      "--out", str(tmp_path / "pilot")]) == 0
    text = capsys.readouterr().out
    assert "greedy vs random" in text and "measured on 1,000 deals" in text
    assert (tmp_path / "pilot" / "manifest.json").exists()


@pytest.mark.parametrize("args", [["--diff", "0"], ["--diff", "abc"], ["--diff", "60pp"], []])
def test_bad_input_one_line_exit_2(args, run_dir, capsys):
    argv = ["power", str(run_dir), *args] if args else ["power", "--diff", "1pp"]
    assert root.main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("kc-sim: error:")


def test_match_runs_are_refused(tmp_path, capsys):
    out = tmp_path / "m"
    run_tournament(["greedy", "random"], players=2, matches=4, seed=1, out=out, jobs=1, backend="sequential",
                   quiet=True)
    assert root.main(["power", str(out)]) == 2
    assert "single rounds" in capsys.readouterr().err


def test_agents_that_play_alike_are_not_sized(tmp_path, capsys):
    """greedy and king-first are level in every deal at 2 players: no spread to size a run from.
    The formula on an sd of 0 said 2 deals (--rounds 4) for any difference; the row now shows
    dashes, one line says why, and no command is offered when no other pair is left."""
    out = tmp_path / "alike"
    run_tournament(["greedy", "king-first"], rounds=2000, seed=1, out=out, jobs=1, backend="sequential", quiet=True)
    (row,) = power_from_run(out, 0.005)
    assert row.level and row.sd == 0
    assert root.main(["power", str(out)]) == 0
    text = capsys.readouterr().out
    line = next(x for x in text.splitlines() if x.startswith("greedy vs king-first"))
    assert line.split()[-4:] == ["-", "-", "-", "-"]
    assert "greedy and king-first (they played identically): the same finishes-ahead share in every deal" in text
    assert "to decide every pair" not in text and "--rounds 4" not in text
