"""The leaderboard: the Bradley-Terry fit recovers known strengths from synthetic rounds,
pairs are taken from every round, intervals cover the truth, and the command line works on
a small tournament (and is printed by kc-sim tournament with three or more agents)."""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import typer
from typer.testing import CliRunner

from kc_sim.analysis.leaderboard import (
    ELO,
    FIGURE_FILE,
    LEADERBOARD_FILE,
    bootstrap_interval,
    fit_bt,
    leaderboard,
    load_comparisons,
)
from kc_sim.cli.leaderboard import leaderboard as leaderboard_cmd
from kc_sim.cli.tournament import tournament
from kc_sim.errors import UserError
from kc_sim.stats import t_of
from kc_sim.tournament.run import run_tournament

NAMES = ["strong", "good", "mid", "weak", "worst"]
THETA = np.array([1.0, 0.4, 0.0, -0.5, -0.9])


def _write_run(folder, agents, penalties, group, parts=2):
    """A minimal run folder: rounds/part-*.parquet with agent_<s>, penalty_<s>, group, lineup."""
    (folder / "rounds").mkdir(parents=True)
    n, k = penalties.shape
    names = pa.array(NAMES, pa.string())
    for i, idx in enumerate(np.array_split(np.arange(n), parts)):
        cols = {"lineup": pa.array(np.zeros(len(idx), np.int16)), "group": pa.array(group[idx])}
        for s in range(k):
            cols[f"agent_{s}"] = pa.DictionaryArray.from_arrays(pa.array(agents[idx, s].astype(np.int16)), names)
        for s in range(k):
            cols[f"penalty_{s}"] = pa.array(penalties[idx, s].astype(np.int16))
        pq.write_table(pa.table(cols), folder / "rounds" / f"part-{i:05d}.parquet")
    return folder


def _synthetic(folder, rounds=30000, seed=1):
    """Two-seat rounds between random pairs; the lower penalty wins with Bradley-Terry odds."""
    rng = np.random.default_rng(seed)
    agents = np.array([rng.choice(len(NAMES), 2, replace=False) for _ in range(rounds)])
    p = 1 / (1 + np.exp(THETA[agents[:, 1]] - THETA[agents[:, 0]]))
    first_wins = rng.random(rounds) < p
    pen = np.where(first_wins[:, None], [0, 4], [4, 0])
    return _write_run(folder, agents, pen, np.arange(rounds, dtype=np.int64) // 2)


def test_fit_recovers_known_strengths(tmp_path):
    run = _synthetic(tmp_path / "run")
    df = leaderboard([run], bootstrap=60, seed=3)
    assert df["agent"].tolist() == NAMES                      # ranked in the true order
    got = df.set_index("agent")["theta"].reindex(NAMES).to_numpy()
    truth = THETA - THETA.mean()
    assert np.abs(got - truth).max() < 0.08
    lo = df.set_index("agent")["theta_lo"].reindex(NAMES).to_numpy()
    hi = df.set_index("agent")["theta_hi"].reindex(NAMES).to_numpy()
    assert ((lo <= truth + 0.02) & (truth - 0.02 <= hi)).all() and (hi - lo < 0.2).all()
    assert np.allclose(df["rating"], ELO * df["theta"])
    assert df.attrs["rounds"] == 30000 and df["rounds"].sum() == 60000
    # the sandwich intervals (clustered by deal) agree in size with the bootstrap
    dh = leaderboard([run], bootstrap=0)
    assert (dh["interval"] == "clustered").all()
    assert np.allclose(dh["theta"], df["theta"])
    width_b = (df["theta_hi"] - df["theta_lo"]).mean()
    width_h = (dh["theta_hi"] - dh["theta_lo"]).mean()
    assert 0.6 < width_b / width_h < 1.6


def test_fit_bt_closed_form_two_agents():
    # 2 agents, 75 wins in 100: theta difference = log(3) (the virtual tie is negligible with prior=0)
    W = np.array([[0, 75.0], [25.0, 0]])
    N = np.array([[0, 100.0], [100.0, 0]])
    theta, cov = fit_bt(W, N, prior=0.0)
    assert math.isclose(theta[0] - theta[1], math.log(3), rel_tol=1e-9)
    assert math.isclose(theta.sum(), 0.0, abs_tol=1e-12)
    # an agent that always wins still gets a finite rating
    theta, _ = fit_bt(np.array([[0, 50.0], [0, 0]]), np.array([[0, 50.0], [50.0, 0]]))
    assert np.isfinite(theta).all() and theta[0] > 1.5


def test_every_pair_of_seats_counts_and_ties_are_halves(tmp_path):
    agents = np.array([[0, 1, 2], [2, 0, 1]])
    pen = np.array([[0, 3, 3], [5, 2, 0]])
    c = load_comparisons([_write_run(tmp_path / "r", agents, pen, np.array([0, 0]), parts=1)])
    score = {}
    for a, b, s, n in zip(c.a, c.b, c.score, c.count):
        x, y = NAMES.index(c.agents[a]), NAMES.index(c.agents[b])
        score[(x, y) if x < y else (y, x)] = (float(s), float(n)) if x < y else (float(n - s), float(n))
    # round 1: 0 beats 1 and 2, 1 ties 2; round 2 (2: 5, 0: 2, 1: 0): 1 beats 0 and 2, 0 beats 2
    assert score == {(0, 1): (1.0, 2.0), (0, 2): (2.0, 2.0), (1, 2): (1.5, 2.0)}
    assert c.n_units == 1 and sorted(c.agents) == sorted(NAMES[:3]) and c.rounds.tolist() == [2, 2, 2]


def test_bad_input(tmp_path):
    with pytest.raises(UserError, match="nope does not exist"):
        leaderboard([tmp_path / "nope"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(UserError, match="empty is not a run folder: it has no manifest.json"):
        leaderboard([tmp_path / "empty"])
    # two groups of agents that never met
    agents = np.array([[0, 1], [2, 3]] * 5)
    pen = np.array([[0, 2], [2, 0]] * 5)
    run = _write_run(tmp_path / "split", agents, pen, np.arange(10, dtype=np.int64))
    with pytest.raises(UserError, match="never met"):
        leaderboard([run])
    with pytest.raises(UserError, match="bootstrap"):
        leaderboard([run], bootstrap=-1)


def _app() -> typer.Typer:
    app = typer.Typer()
    app.command("leaderboard")(leaderboard_cmd)
    app.command("tournament")(tournament)
    return app


def test_cli_on_a_small_tournament(tmp_path):
    a = run_tournament(["greedy", "random"], players=2, rounds=400, jobs=1, out=tmp_path / "a", quiet=True)
    b = run_tournament(["planner", "greedy"], players=2, rounds=400, jobs=1, out=tmp_path / "b", quiet=True)
    result = CliRunner().invoke(_app(), ["leaderboard", str(a.out), str(b.out), "--out", str(tmp_path / "lb"),
                                         "--bootstrap", "20"])
    assert result.exit_code == 0, result.output
    assert "planner" in result.output and "random" in result.output and "rating" in result.output
    assert (tmp_path / "lb" / LEADERBOARD_FILE).exists() and (tmp_path / "lb" / FIGURE_FILE).exists()
    df = __import__("pandas").read_parquet(tmp_path / "lb" / LEADERBOARD_FILE)
    assert set(df["agent"]) == {"greedy", "random", "planner"} and df["agent"].iloc[0] == "planner"
    # bad input is a UserError (the kc-sim command line prints it on one line, exit 2)
    with pytest.raises(UserError):
        leaderboard_cmd([tmp_path / "missing"])


def test_tournament_prints_the_leaderboard_with_three_agents(tmp_path):
    out = tmp_path / "t"
    result = CliRunner().invoke(_app(), ["tournament", "--agents", "greedy,random,merger", "--players", "2",
                                         "--rounds", "300", "--jobs", "1", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "rating [95% CI]" in result.output
    assert (out / LEADERBOARD_FILE).exists() and (out / FIGURE_FILE).exists()
    two = CliRunner().invoke(_app(), ["tournament", "--agents", "greedy,random", "--rounds", "100", "--jobs", "1",
                                      "--out", str(tmp_path / "two")])
    assert two.exit_code == 0 and "rating [95% CI]" not in two.output


def _in_memory_comparisons(run_dirs):
    """The leaderboard's comparisons computed the direct way, every round in memory at once
    (the implementation before streaming): the oracle for the streamed sums."""
    names, us, as_, bs, ss = {}, [], [], [], []
    offset = 0
    for run in run_dirs:
        t = pa.concat_tables([pq.read_table(p) for p in sorted((run / "rounds").glob("part-*.parquet"))])
        k = sum(1 for c in t.column_names if c.startswith("agent_"))
        group = t.column("group").to_numpy().astype(np.int64)
        codes = np.stack([[names.setdefault(x, len(names)) if x is not None else -1
                           for x in t.column(f"agent_{s}").to_pylist()] for s in range(k)], axis=1)
        pen = np.stack([t.column(f"penalty_{s}").fill_null(-1).to_numpy() for s in range(k)], axis=1)
        for s in range(k):
            for u in range(s + 1, k):
                ok = (pen[:, s] >= 0) & (pen[:, u] >= 0) & (codes[:, s] != codes[:, u])
                a, b, ps, pu = codes[ok, s], codes[ok, u], pen[ok, s], pen[ok, u]
                score = np.where(ps < pu, 1.0, np.where(ps == pu, 0.5, 0.0))
                swap = a > b
                as_.append(np.where(swap, b, a)), bs.append(np.where(swap, a, b))
                ss.append(np.where(swap, 1 - score, score)), us.append(offset + group[ok])
        offset += int(group.max()) + 1
    label = sorted(names, key=names.get)
    out = {}
    for u, a, b, sc in zip(np.concatenate(us), np.concatenate(as_), np.concatenate(bs), np.concatenate(ss)):
        key, sc = _canonical(int(u), label[a], label[b], float(sc), 1)
        s0, c0 = out.get(key, (0.0, 0))
        out[key] = (s0 + sc, c0 + 1)
    return out


def _canonical(u, x, y, score, count):
    """(unit, first name, second name) in name order, with the score of the first."""
    return ((u, x, y), score) if x < y else ((u, y, x), count - score)


def _streamed(c):
    out = {}
    for u, a, b, s, n in zip(c.unit, c.a, c.b, c.score, c.count):
        key, sc = _canonical(int(u), c.agents[a], c.agents[b], float(s), float(n))
        out[key] = (sc, int(n))
    return out


def test_streamed_comparisons_equal_the_in_memory_ones(tmp_path):
    """Read part by part, the sums per (deal, pair) are the ones computed with every round in
    memory, for two runs (3 players, several parts each) taken together."""
    runs = [tmp_path / "a", tmp_path / "b"]
    run_tournament(["greedy", "random", "merger", "king-first"], players=3, rounds=4800, chunk_size=600,
                   seed=5, out=runs[0], quiet=True, jobs=1)
    run_tournament(["greedy", "random"], players=2, rounds=800, chunk_size=200, seed=6, out=runs[1], quiet=True,
                   jobs=1)
    got = _streamed(load_comparisons(runs))
    want = _in_memory_comparisons(runs)
    assert len(got) == len(want) > 1000
    for key, (s, n) in want.items():
        assert got[key] == (pytest.approx(s), n)


def test_batches_of_deals_keep_the_estimate(tmp_path, monkeypatch):
    """Past MAX_BATCHES deals, deals are pooled into batches: the point ratings do not change
    at all and the bootstrap intervals stay about as wide."""
    from kc_sim.stats import sums

    run = tmp_path / "r"
    run_tournament(["greedy", "random", "merger"], players=2, rounds=6000, chunk_size=600, seed=2, out=run,
                   quiet=True, jobs=1)
    full = leaderboard([run], bootstrap=200, seed=1)
    monkeypatch.setattr(sums, "MAX_BATCHES", 128)
    c = load_comparisons([run])
    assert c.n_units == 125                       # 1,000 deals in batches of 8
    pooled = leaderboard([run], bootstrap=200, seed=1)
    assert np.allclose(pooled["theta"], full["theta"], atol=1e-12)
    w_full = (full["theta_hi"] - full["theta_lo"]).to_numpy()
    w_pool = (pooled["theta_hi"] - pooled["theta_lo"]).to_numpy()
    assert np.all(np.abs(w_pool / w_full - 1) < 0.35)


def test_bootstrap_of_a_few_units_where_resamples_can_disconnect():
    """Three agents over two units, each pair met in one unit only: many Poisson resamples
    leave an agent with no comparison. They are drawn again, and the fit never fails."""
    from kc_sim.analysis.leaderboard import Comparisons, rate_comparisons

    c = Comparisons(["a", "b", "c"], np.array([0, 1, 1]), np.array([0, 0, 1]), np.array([1, 2, 2]),
                    np.array([3.0, 2.0, 1.0]), np.array([4.0, 4.0, 4.0]), np.array([8, 8, 8]), 2, 12)
    board = rate_comparisons(c, bootstrap=200, seed=1)
    board = board[0] if isinstance(board, tuple) else board
    assert len(board) == 3 and np.isfinite(board[["rating", "rating_lo", "rating_hi"]].to_numpy()).all()
    # an agent with no comparison at all stays exactly at the mean; the others are fitted
    theta, _ = fit_bt(np.array([[0.0, 3, 0], [1, 0, 0], [0, 0, 0]]), np.array([[0.0, 4, 0], [4, 0, 0], [0, 0, 0]]))
    assert theta[2] == 0.0 and theta[0] > 0 > theta[1] and theta[0] == pytest.approx(-theta[1])


def _solvers():
    """np.linalg.solve replaced by other ways of solving, as other linear-algebra libraries
    would: least squares, an explicit inverse, and LU with a perturbation of the matrix at
    the rounding level; each refuses a (near) singular matrix the way some libraries do."""
    real = np.linalg.solve

    def guarded(f):
        def solve(A, b):
            if np.linalg.cond(A) > 1e12:
                raise np.linalg.LinAlgError("singular matrix")
            return f(A, b)
        return solve

    def perturbed(A, b):
        rng = np.random.default_rng(abs(hash(A.tobytes())) % 2 ** 32)
        return real(A * (1 + 1e-14 * rng.standard_normal(A.shape)), b)

    return {"solve": real, "lstsq": guarded(lambda A, b: np.linalg.lstsq(A, b, rcond=None)[0]),
            "inverse": guarded(lambda A, b: np.linalg.inv(A) @ b), "perturbed": guarded(perturbed)}


@pytest.mark.parametrize("solver", ["solve", "lstsq", "inverse", "perturbed"])
def test_the_fit_of_agents_apart_does_not_depend_on_the_linear_algebra(solver, monkeypatch):
    """Groups of agents with no comparison between them (a resample of few deals): each
    group is fitted on its own and centred, an agent alone stays at the mean, whatever
    solves the linear systems (no singular system is ever solved)."""
    W = np.array([[0.0, 3, 0, 0, 0], [1, 0, 0, 0, 0], [0, 0, 0, 5, 0], [0, 0, 2, 0, 0], [0, 0, 0, 0, 0]])
    N = np.array([[0.0, 4, 0, 0, 0], [4, 0, 0, 0, 0], [0, 0, 0, 7, 0], [0, 0, 7, 0, 0], [0, 0, 0, 0, 0]])
    want, _ = fit_bt(W, N)
    monkeypatch.setattr(np.linalg, "solve", _solvers()[solver])
    got, _ = fit_bt(W, N)
    assert got[4] == 0.0 and got[0] + got[1] == pytest.approx(0.0, abs=1e-12)
    assert got[2] + got[3] == pytest.approx(0.0, abs=1e-12)
    assert np.allclose(got, want, atol=1e-9, rtol=0)
    # and the whole bootstrap of the few-units comparisons is the same
    from kc_sim.analysis.leaderboard import Comparisons, rate_comparisons

    c = Comparisons(["a", "b", "c"], np.array([0, 1, 1]), np.array([0, 0, 1]), np.array([1, 2, 2]),
                    np.array([3.0, 2.0, 1.0]), np.array([4.0, 4.0, 4.0]), np.array([8, 8, 8]), 2, 12)
    board = rate_comparisons(c, bootstrap=200, seed=1)
    monkeypatch.undo()
    ref = rate_comparisons(c, bootstrap=200, seed=1)
    cols = ["rating", "rating_lo", "rating_hi"]
    assert np.allclose(board[cols].to_numpy(), ref[cols].to_numpy(), atol=1e-6, rtol=0)


def test_runs_with_one_seed_share_their_deals(tmp_path):
    """Two runs with the same --seed played the same deals: their rounds of a deal are one unit
    of the bootstrap (and of the clustered intervals); a run with another seed adds its own."""
    a, b, c = (tmp_path / x for x in "abc")
    run_tournament(["greedy", "random"], players=2, rounds=600, seed=4, out=a, jobs=1, quiet=True)
    run_tournament(["merger", "random"], players=2, rounds=600, seed=4, out=b, jobs=1, quiet=True)
    run_tournament(["merger", "random"], players=2, rounds=600, seed=5, out=c, jobs=1, quiet=True)
    shared, apart = load_comparisons([a, b]), load_comparisons([a, c])
    assert shared.n_units == 300 and shared.families == 1
    assert apart.n_units == 600 and apart.families == 2
    # the pooled deals carry both runs' comparisons: random's against greedy and against merger
    both = {int(u) for u, x, y in zip(shared.unit, shared.a, shared.b)
            if {shared.agents[x], shared.agents[y]} == {"greedy", "random"}}
    assert both == set(range(300))
    with pytest.raises(UserError, match="given twice"):
        load_comparisons([a, tmp_path / "." / "a"])


def test_the_leaderboard_of_several_runs_goes_to_a_folder_of_its_own(tmp_path):
    a = run_tournament(["greedy", "random", "merger"], players=2, rounds=300, seed=1, out=tmp_path / "a", jobs=1,
                       quiet=True).out
    b = run_tournament(["planner", "greedy"], players=2, rounds=200, seed=1, out=tmp_path / "b", jobs=1,
                       quiet=True).out
    own = (a / LEADERBOARD_FILE).read_bytes() if (a / LEADERBOARD_FILE).exists() else None
    result = CliRunner().invoke(_app(), ["leaderboard", str(a), str(b), "--bootstrap", "10"])
    assert result.exit_code == 0, result.output
    new = tmp_path / "leaderboard_a+b"
    assert (new / LEADERBOARD_FILE).exists() and str(new / LEADERBOARD_FILE) in result.output
    assert "share their deals" in result.output
    assert ((a / LEADERBOARD_FILE).read_bytes() if own is not None else None) == own     # the run's own, untouched
    assert not (b / LEADERBOARD_FILE).exists()
    # a run's folder as --out is refused, unless it is the only run rated
    with pytest.raises(UserError, match="is a run folder"):
        leaderboard_cmd([a, b], out=b)
    leaderboard_cmd([b], out=b, bootstrap=0)
    assert (b / LEADERBOARD_FILE).exists()


def _pivot_coverage(lo, hi):
    """The coverage of intervals ``[est + lo, est + hi]`` when ``est`` is the truth plus a
    standard normal independent of the resamples: ``P(lo <= -e <= hi)``, exactly."""
    cdf = np.vectorize(NormalDist().cdf)
    return float(np.mean(cdf(hi) - cdf(lo)))


def test_200_resamples_give_a_steady_95_percent_interval():
    """The bootstrap's ideal world, many deals (no few-deals factor): the estimate is the truth
    plus N(0, 1), the resamples are the estimate plus N(0, 1). An interval read from 200
    resamples should cover 95%. The percentile interval (numpy's default quantiles, what the
    leaderboard printed before) covers 94.0%: its bounds are the 5th-6th of 200 order
    statistics, short on average and noisy. The interval of :func:`bootstrap_interval`, from
    the resamples' standard deviation, covers 94.9% (over 4,000 sets of resamples)."""
    rng = np.random.default_rng(5)
    boot = rng.standard_normal((200, 4000))
    lo, hi = bootstrap_interval(np.zeros(4000), boot, units=10**8)
    assert np.allclose(-lo, hi)
    new = _pivot_coverage(lo, hi)
    old = _pivot_coverage(np.quantile(boot, 0.025, axis=0), np.quantile(boot, 0.975, axis=0))
    assert 0.947 <= new <= 0.953, new
    assert old < 0.942, old


def test_bootstrap_interval_few_deals_factor_and_missing_resamples():
    """On ``g`` deals the half-width is Student's quantile on g - 1 times sqrt(g / (g - 1)) times
    the resamples' standard deviation; resamples where the figure is undefined (NaN: a pair
    that did not meet) are left out, and a figure never defined has no interval."""
    boot = np.array([[0.0, 1.0, np.nan], [2.0, np.nan, np.nan], [1.0, 3.0, np.nan], [3.0, 5.0, np.nan]])
    lo, hi = bootstrap_interval(np.array([1.5, 3.0, 0.5]), boot, units=20)
    sd = np.array([np.std([0.0, 2, 1, 3], ddof=1), 2.0])
    half = t_of(0.95, 19) * math.sqrt(20 / 19) * sd
    assert np.allclose(hi[:2] - [1.5, 3.0], half) and np.allclose([1.5, 3.0] - lo[:2], half)
    assert np.isnan(lo[2]) and np.isnan(hi[2])


def _relabelled(c, perm):
    """The comparisons ``c`` with agent ``i`` renamed ``perm[i]`` (and listed in that order)."""
    from kc_sim.analysis.leaderboard import Comparisons

    a, b = perm[c.a], perm[c.b]
    swap = a > b
    agents = [None] * len(c.agents)
    for i, name in enumerate(c.agents):
        agents[perm[i]] = name
    rounds = np.empty_like(c.rounds)
    rounds[perm] = c.rounds
    return Comparisons(agents, c.unit, np.where(swap, b, a), np.where(swap, a, b),
                       np.where(swap, c.count - c.score, c.score), c.count, rounds, c.n_units, c.n_rounds)


def test_bootstrap_intervals_are_symmetric_repeatable_and_do_not_depend_on_agent_order():
    """The ratings' and shares' bootstrap intervals are the estimate -+ t * sqrt(g/(g-1)) * the
    resamples' standard deviation: symmetric (the percentile intervals were not), about as wide
    as the sandwich's on 60 deals, the same for a seed, and the same whatever order the agents
    are listed in."""
    from kc_sim.analysis import coverage as C
    from kc_sim.analysis.leaderboard import rate_comparisons

    model = C.Model.scenario("difference", 3)
    c = C.comparisons_of(model, model.rounds(np.random.default_rng(3), 60))
    board = rate_comparisons(c, bootstrap=200, seed=4).set_index("agent")
    assert np.allclose(board.theta_hi - board.theta, board.theta - board.theta_lo)
    pairs = board.attrs["metagame"].pairs
    assert np.allclose(pairs.share_hi - pairs.share, pairs.share - pairs.share_lo)
    sandwich = rate_comparisons(c, bootstrap=0).set_index("agent")
    ratio = (board.theta_hi - board.theta_lo) / (sandwich.theta_hi - sandwich.theta_lo)
    assert ((ratio > 0.85) & (ratio < 1.2)).all(), ratio
    again = rate_comparisons(c, bootstrap=200, seed=4).set_index("agent")
    cols = ["theta_lo", "theta_hi", "nash_rating_lo", "nash_rating_hi", "nash_support"]
    assert board[cols].equals(again[cols])
    other = rate_comparisons(_relabelled(c, np.array([2, 0, 3, 1])), bootstrap=200, seed=4).set_index("agent")
    assert np.allclose(other.loc[board.index, cols].to_numpy(), board[cols].to_numpy(), atol=1e-9,
                       equal_nan=True)
