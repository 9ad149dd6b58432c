"""The pairwise meta-game of the leaderboard (kc_sim.stats.metagame): Nash averaging on
games whose answer is known, the cycles of a constructed intransitive set, Bradley-Terry's
fit test (calibrated when BT holds, rejecting a cycle), the chi-square tail, and the new
leaderboard output on real small runs (shares equal the run's summary, weights sum to 1)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import typer
from typer.testing import CliRunner

from kc_sim.analysis.leaderboard import (
    CYCLES_FILE,
    LEADERBOARD_FILE,
    PAIRS_FILE,
    Comparisons,
    format_fit,
    format_leaderboard,
    untold_lines,
    leaderboard,
    rate_comparisons,
    read_fit,
    save_leaderboard,
)
from kc_sim.cli.leaderboard import leaderboard as leaderboard_cmd
from kc_sim.errors import UserError
from kc_sim.stats import metagame
from kc_sim.stats.ratings import Metagame
from kc_sim.stats.metagame import chi2_sf, find_cycles, lp_max, nash_average, payoff
from kc_sim.tournament.run import run_tournament

RPS = 0.2 * np.array([[0, -1, 1], [1, 0, -1], [-1, 1, 0]], float)


def _entropy(p):
    p = p[p > 0]
    return float(-(p * np.log(p)).sum())


# --- Nash averaging on known games ------------------------------------------------------

def test_rock_paper_scissors_is_uniform_with_zero_ratings():
    w, r = nash_average(RPS)
    assert np.allclose(w, 1 / 3, atol=1e-12) and np.allclose(r, 0.0)


def test_transitive_game_is_pure_on_the_best_agent():
    A = np.array([[0, 0.1, 0.2, 0.3], [-0.1, 0, 0.1, 0.2], [-0.2, -0.1, 0, 0.1], [-0.3, -0.2, -0.1, 0]])
    w, r = nash_average(A)
    assert np.allclose(w, [1, 0, 0, 0]) and np.allclose(r, [0, -0.1, -0.2, -0.3])


def test_dominated_agent_gets_no_weight_and_a_negative_rating():
    A = np.zeros((4, 4))
    A[:3, :3] = RPS
    A[:3, 3], A[3, :3] = [0.1, 0.2, 0.3], [-0.1, -0.2, -0.3]
    w, r = nash_average(A)
    assert np.allclose(w, [1 / 3, 1 / 3, 1 / 3, 0]) and np.allclose(r[:3], 0)
    assert math.isclose(r[3], -0.2, abs_tol=1e-12)          # its mean payoff against the uniform mixture


def test_a_redundant_copy_changes_no_other_rating():
    """Nash averaging's invariance: a copy of rock splits rock's weight (maximum entropy: half
    each) and every agent's rating stays what it was; the mean payoff against all agents does not."""
    A = np.zeros((4, 4))
    A[:3, :3] = RPS
    A[:3, 3], A[3, :3] = [0.1, 0.2, 0.3], [-0.1, -0.2, -0.3]
    w, r = nash_average(A)
    idx = [0, 0, 1, 2, 3]                                   # rock twice
    w2, r2 = nash_average(A[np.ix_(idx, idx)])
    assert np.allclose(w2, [1 / 6, 1 / 6, 1 / 3, 1 / 3, 0])
    assert np.allclose(r2, r[idx])
    assert not np.allclose(A[np.ix_(idx, idx)].mean(axis=1)[1:], A.mean(axis=1))   # the naive average moves


def test_generic_game_support_and_payoffs():
    """A weighted cycle: the equilibrium is not uniform (weights 1/3, 1/6, 1/2 solve A p = 0),
    and the answer satisfies the equilibrium conditions."""
    A = np.array([[0, 0.3, -0.1], [-0.3, 0, 0.2], [0.1, -0.2, 0]])
    w, r = nash_average(A)
    assert np.allclose(w, [1 / 3, 1 / 6, 1 / 2]) and np.allclose(A @ w, 0, atol=1e-12)


def test_maximum_entropy_when_a_constraint_of_an_outside_agent_binds():
    """Rock copied and an agent J that beats the copy twice as much as it loses to rock: the
    equilibria are p_rock + p_copy = 1/3 with p_rock >= 2 p_copy, and the maximum-entropy one
    sits on J's constraint (2/9, 1/9), not at the even split. No mixture of other equilibria
    (vertices from LPs with random objectives) has more entropy."""
    A = np.zeros((5, 5))
    A[:4, :4] = RPS[np.ix_([0, 0, 1, 2], [0, 0, 1, 2])]
    A[0, 4], A[1, 4] = 0.1, -0.2
    A[4, :] = -A[:, 4]
    w, r = nash_average(A)
    assert np.allclose(w, [2 / 9, 1 / 9, 1 / 3, 1 / 3, 0]) and np.all(A @ w <= 1e-12)
    rng = np.random.default_rng(0)
    n = 5
    A_eq = np.zeros((n + 1, 2 * n))
    A_eq[:n, :n], A_eq[:n, n:], A_eq[n, :n] = A, np.eye(n), 1.0
    b = np.r_[np.zeros(n), 1.0]
    vertices = np.array([lp_max(np.r_[rng.normal(size=n), np.zeros(n)], A_eq, b)[:n] for _ in range(50)])
    assert np.all(vertices @ A.T <= 1e-12)                  # every vertex is an equilibrium
    best = max(_entropy(rng.dirichlet(np.full(len(vertices), 0.5)) @ vertices) for _ in range(500))
    assert _entropy(w) >= best - 1e-12


def test_random_games_give_equilibria_and_copies_change_nothing():
    """200 random antisymmetric games of 2-12 agents (noisy near-ties, as real shares are):
    the answer is an equilibrium (A w <= 0, = 0 on the support), and adding copies of random
    agents leaves every rating as it was and splits a copied agent's weight evenly."""
    rng = np.random.default_rng(11)
    for _ in range(200):
        n = int(rng.integers(2, 13))
        A = rng.normal(0, 0.05, (n, n)) + np.linspace(0.1, -0.1, n)[:, None] * rng.integers(0, 2)
        A = (A - A.T) / 2
        w, r = nash_average(A)
        assert math.isclose(w.sum(), 1.0, rel_tol=1e-12) and (w >= 0).all()
        assert np.all(A @ w <= 1e-9) and np.allclose((A @ w)[w > 1e-9], 0, atol=1e-9)
        idx = list(range(n)) + [int(x) for x in rng.integers(0, n, 2)]
        w2, r2 = nash_average(A[np.ix_(idx, idx)])
        assert np.allclose(r2, r[idx], atol=1e-9)
        merged = np.bincount(idx, weights=w2, minlength=n)
        assert np.allclose(merged, w, atol=1e-7)
        for j in set(idx[n:]):
            same = [t for t, x in enumerate(idx) if x == j]
            assert np.allclose(w2[same], w2[same[0]], atol=1e-7)


def test_nash_refuses_bad_input():
    with pytest.raises(UserError, match="antisymmetric"):
        nash_average(np.ones((3, 3)))
    with pytest.raises(UserError, match="at most"):
        nash_average(np.zeros((metagame.MAX_NASH_AGENTS + 1,) * 2))


def test_lp_max_small_programs():
    # max x + 2y s.t. x + y + s = 4, x + 3y + t = 6  -> (3, 1), value 5
    x = lp_max([1, 2, 0, 0], [[1, 1, 1, 0], [1, 3, 0, 1]], [4, 6])
    assert np.allclose(x[:2], [3, 1])
    assert lp_max([1, 0], [[1, 1], [1, 1]], [1, 2]) is None   # infeasible


# --- the chi-square tail --------------------------------------------------------------------

@pytest.mark.parametrize("x, df, p", [(3.841458820694124, 1, 0.05), (18.307038053275146, 10, 0.05),
                                      (6.634896601021214, 1, 0.01)])
def test_chi2_sf_known_quantiles(x, df, p):
    assert math.isclose(chi2_sf(x, df), p, rel_tol=1e-9)


@pytest.mark.parametrize("x", [0.05, 0.7, 3.0, 11.0, 40.0, 150.0])
def test_chi2_sf_closed_forms(x):
    """Odd df from erfc, even df from the Poisson sum: both branches of the incomplete gamma."""
    h = x / 2
    assert math.isclose(chi2_sf(x, 1), math.erfc(math.sqrt(h)), rel_tol=1e-9, abs_tol=1e-300)
    three = math.erfc(math.sqrt(h)) + math.sqrt(2 * x / math.pi) * math.exp(-h)
    assert math.isclose(chi2_sf(x, 3), three, rel_tol=1e-9, abs_tol=1e-300)
    for df in (4, 10, 20):
        poisson = math.exp(-h) * sum(h ** k / math.factorial(k) for k in range(df // 2))
        assert math.isclose(chi2_sf(x, df), poisson, rel_tol=1e-9, abs_tol=1e-300)


def test_chi2_sf_two_df_is_exponential():
    for x in (0.01, 1.0, 7.5, 60.0):
        assert math.isclose(chi2_sf(x, 2), math.exp(-x / 2), rel_tol=1e-10)
    assert chi2_sf(0.0, 4) == 1.0 and math.isnan(chi2_sf(1.0, 0))


# --- cycles ---------------------------------------------------------------------------------

def test_find_cycles_in_a_ring_and_a_four_cycle_with_no_three_cycle():
    S = np.full((4, 4), np.nan)

    def put(a, b, s, lo):
        S[a, b], S[b, a] = s, 1 - s
        LO[a, b], LO[b, a] = lo, 1 - s - (s - lo)       # symmetric interval: the loser's lower end

    LO = np.full((4, 4), np.nan)
    for a, b in [(0, 1), (1, 2), (2, 3), (3, 0)]:       # a ring of four; the diagonals never met
        put(a, b, 0.6, 0.55)
    cycles = find_cycles(S, LO)
    assert len(cycles) == 1 and cycles[0]["members"] == [0, 1, 2, 3] and cycles[0]["significant"]
    # a transitive set has none
    T = np.array([[np.nan, .6, .7], [.4, np.nan, .6], [.3, .4, np.nan]])
    assert find_cycles(T, T - 0.01) == []


# --- the leaderboard on constructed comparisons ------------------------------------------

def _comparisons(theta, units=400, per=6, seed=0, cycle=0.0, sd=0.1):
    """Two-seat comparisons of every pair of agents in each unit (deal), ``per`` per pair,
    with a per-deal shift of the win chance (duplicate deals correlate a deal's rounds);
    ``cycle`` adds a ring a0 > a1 > a2 > a0 on top of the Bradley-Terry odds."""
    rng = np.random.default_rng(seed)
    n = len(theta)
    shift = {(0, 1): cycle, (1, 2): cycle, (0, 2): -cycle}
    u, a, b, s = [], [], [], []
    for i in range(n):
        for j in range(i + 1, n):
            p = 1 / (1 + np.exp(-(theta[i] - theta[j] + shift.get((i, j), 0.0))))
            wins = rng.binomial(per, np.clip(p + rng.normal(0, sd, units), 0, 1))
            u.append(np.arange(units)), a.append(np.full(units, i)), b.append(np.full(units, j))
            s.append(wins.astype(float))
    u, a, b, s = (np.concatenate(x) for x in (u, a, b, s))
    o = np.lexsort((b, a, u))
    return Comparisons([f"a{i}" for i in range(n)], u[o], a[o], b[o], s[o], np.full(len(u), float(per)),
                       np.full(n, units * per * (n - 1)), units, units * per * n * (n - 1) // 2)


THETA = np.array([0.3, 0.1, 0.0, -0.2, -0.3])


def test_a_significant_cycle_is_found_and_bt_does_not_fit(tmp_path):
    df = rate_comparisons(_comparisons(THETA, seed=1, cycle=0.4), bootstrap=100, seed=2)
    meta = df.attrs["metagame"]
    sig = meta.cycles[meta.cycles["significant"]]
    assert sig["cycle"].tolist() == ["a0 > a1 > a2 > a0"]
    row = sig.iloc[0]
    assert row["min_lo"] > 0.5 and row["support"] > 0.95 and row["length"] == 3
    assert not meta.fit["fits"] and meta.fit["p_value"] < 1e-6 and meta.fit["df"] == 10 - 4
    assert {meta.fit["worst_agent"], meta.fit["worst_opponent"]} <= {"a0", "a1", "a2"}
    # Nash: the ring is the support; the two agents outside it rate below 0
    nash = df.set_index("agent")
    assert math.isclose(nash["nash_weight"].sum(), 1.0, rel_tol=1e-12)
    assert (nash.loc[["a0", "a1", "a2"], "nash_weight"] > 0.05).all()
    assert (nash.loc[["a3", "a4"], "nash_weight"] == 0).all() and (nash.loc[["a3", "a4"], "nash_rating"] < -0.05).all()
    assert (nash.loc[["a0", "a1", "a2"], "nash_rating"] == 0).all()
    text = format_leaderboard(df)
    assert "a0 > a1 > a2 > a0" in text and "SIGNIFICANT" in text and "BT does not fit: worst pair" in text
    files = save_leaderboard(df, tmp_path)
    cyc = pd.read_parquet(files["cycles"])
    assert cyc["cycle"].iloc[0] == "a0 > a1 > a2 > a0" and list(cyc["agents"].iloc[0]) == ["a0", "a1", "a2"]
    assert read_fit(files["leaderboard"])["fits"] is False


def test_bt_fit_is_calibrated_when_bradley_terry_holds():
    """Over 120 data sets drawn from Bradley-Terry odds (with deal-level correlation), the fit
    test rejects at about its level (5%; binomial 95% range 1-10 of 120), and a clean data set
    has no significant cycle."""
    reject = 0
    for s in range(120):
        fit = rate_comparisons(_comparisons(THETA, units=200, seed=s), bootstrap=0).attrs["metagame"].fit
        reject += not fit["fits"]
    assert 1 <= reject <= 13
    meta = rate_comparisons(_comparisons(THETA, seed=7), bootstrap=50).attrs["metagame"]
    assert not meta.cycles["significant"].any() and meta.fit["fits"]


# --- the leaderboard on real runs -----------------------------------------------------------

@pytest.fixture(scope="module")
def run3(tmp_path_factory):
    out = tmp_path_factory.mktemp("runs") / "g3"
    run_tournament(["greedy", "random", "merger"], players=2, rounds=4000, seed=3, out=out, quiet=True, jobs=1)
    return out


def test_pairwise_shares_equal_the_run_summary(run3, tmp_path):
    df = leaderboard([run3], bootstrap=60, seed=1)
    meta = df.attrs["metagame"]
    pairs = meta.pairs
    summary = pd.read_parquet(run3 / "summary.parquet")
    h2h = summary[summary["opponent"].notna()].set_index(["agent", "opponent"])
    assert len(pairs) == 6 and len(h2h) == 6
    for r in pairs.itertuples(index=False):
        want = h2h.loc[(r.agent, r.opponent)]
        assert r.comparisons == want["rounds"]
        assert math.isclose(r.share, (want["beats"] + 0.5 * want["ties"]) / want["rounds"], rel_tol=1e-12)
        assert r.share_lo < r.share < r.share_hi
    back = pairs.set_index(["agent", "opponent"])
    for (a, b), r in back.iterrows():                      # both orders, complementary
        assert math.isclose(r["share"] + back.loc[(b, a), "share"], 1.0, rel_tol=1e-12)
        assert math.isclose(r["bt_share"] + back.loc[(b, a), "bt_share"], 1.0, rel_tol=1e-12)
    assert math.isclose(df["nash_weight"].sum(), 1.0, rel_tol=1e-12)
    assert (df["nash_rating"] <= 0).all() and (df.loc[df["nash_weight"] > 0, "nash_rating"] == 0).all()
    assert ((df["nash_rating_lo"] <= df["nash_rating"] + 1e-12) & (df["nash_rating"] <= df["nash_rating_hi"] + 1e-12)).all()
    # the Nash ratings are the payoffs against the mixture, from the pairs table
    S = back["share"].unstack().reindex(index=df["agent"], columns=df["agent"]).to_numpy()
    assert np.allclose(payoff(S) @ df["nash_weight"].to_numpy(), df["nash_rating"], atol=1e-12)
    assert meta.fit["df"] == 1 and 0 <= meta.fit["p_value"] <= 1
    files = save_leaderboard(df, tmp_path)
    assert set(files) == {"leaderboard", "pairs", "cycles", "figure"}
    saved = pd.read_parquet(files["leaderboard"])
    assert {"nash_weight", "nash_rating", "nash_rating_lo", "nash_rating_hi"} <= set(saved.columns)
    assert pd.read_parquet(files["pairs"]).equals(pairs)
    assert read_fit(files["leaderboard"])["chi2"] == pytest.approx(meta.fit["chi2"])


def test_bootstrap_zero_gives_clustered_pair_intervals(run3):
    df = leaderboard([run3], bootstrap=0)
    pairs = df.attrs["metagame"].pairs
    assert (pairs["interval"] == "clustered").all() and (pairs["share_lo"] < pairs["share"]).all()
    assert df["nash_rating_lo"].isna().all() and math.isclose(df["nash_weight"].sum(), 1.0)


def test_cli_prints_the_metagame(run3, tmp_path):
    app = typer.Typer()
    app.command("leaderboard")(leaderboard_cmd)
    app.command("other")(lambda: None)
    result = CliRunner().invoke(app, ["leaderboard", str(run3), "--out", str(tmp_path), "--bootstrap", "20"])
    assert result.exit_code == 0, result.output
    out = result.output
    assert "pairwise: % of comparisons" in out and "Nash averaging" in out
    assert ("no intransitive cycles" in out) or ("intransitive cycles:" in out)
    assert "BT fits" in out or "BT does not fit" in out
    for name in (LEADERBOARD_FILE, PAIRS_FILE, CYCLES_FILE):
        assert (tmp_path / name).exists() and name in out


def test_agents_that_play_alike_leave_nothing_to_test(tmp_path):
    """greedy and king-first play alike at 3 players: level in every deal, and their shares
    against a third agent move together. BT fits the rest exactly, so the residuals' whole
    covariance is rounding: the fit line says there is nothing to test (it printed "chi2
    2467584927668557578240.00 on 1 df, p = 0" when rounding was taken for variance)."""
    run = tmp_path / "alike"
    run_tournament(["greedy", "king-first", "merger"], players=3, rounds=6000, seed=0, jobs=1, quiet=True, out=run)
    df = leaderboard([run], bootstrap=0)
    fit = df.attrs["metagame"].fit
    assert fit["level_pairs"] == [["greedy", "king-first", 0.5]]
    assert fit["df"] == 0 and fit["fits"]
    text = format_fit(fit)
    assert text.startswith("BT fits: no test") and "greedy and king-first: 50.0% in every deal" in text
    # the same shares with rounding as their only spread: still nothing to test
    cov = np.array([[0.0, 0.0, 0.0], [0.0, 1e-6, 1e-6], [0.0, 1e-6, 1e-6]])
    test = metagame.bt_fit_test(np.array([1e-3, 1e-3, -2e-3]), np.array([[0, 1], [0, 2], [1, 2]]),
                                np.array([0.5, 0.5015, 0.5015]), np.full(3, 6000.0), cov,
                                drop=np.array([True, False, False]))
    assert test["df"] == 0 and test["chi2"] == 0.0


def test_a_misfit_line_prints_the_decimals_that_tell_its_values_apart():
    """At 4 players a worst pair printed "observed 50.0%, BT 50.0% (z = +2.1)": two equal
    numbers for a residual of two standard errors. The line takes the decimals that show it."""
    fit = {"df": 3, "chi2": 9.1, "p_value": 0.03, "fits": False, "worst_agent": "king-first",
           "worst_opponent": "greedy", "worst_share": 0.50041, "worst_bt_share": 0.49987, "worst_z": 2.1}
    assert "observed 50.04%, BT 49.99% (z = +2.1)" in format_fit(fit)
    fit.update(worst_share=0.5604, worst_bt_share=0.5391)
    assert "observed 56.0%, BT 53.9%" in format_fit(fit)


def test_a_nash_tie_broken_by_noise_is_said():
    """Two agents not told apart (their share's interval includes 50%): Nash averaging gives
    one of them all the weight by the noise of the run (greedy in one seed, king-first in the
    next at 4 players); the leaderboard says so, with digits that show the interval holds 50%."""
    df = pd.DataFrame({"agent": ["greedy", "king-first", "random"], "nash_weight": [1.0, 0.0, 0.0]})
    pairs = pd.DataFrame({"agent": ["greedy", "king-first", "greedy", "random"],
                          "opponent": ["king-first", "greedy", "random", "greedy"],
                          "share": [0.50004, 0.49996, 0.56, 0.44], "share_lo": [0.49994, 0.49986, 0.55, 0.43],
                          "share_hi": [0.50014, 0.50006, 0.57, 0.45]})
    meta = Metagame(pairs, pd.DataFrame(), {})
    lines = untold_lines(df, meta)
    assert len(lines) == 1, lines                       # random is told apart: nothing said of it
    assert lines[0].startswith("greedy is not told apart from king-first (50.004% [49.994, 50.014])")
    assert "another seed may move it" in lines[0]
    assert untold_lines(df.assign(nash_weight=[0.5, 0.5, 0.0]), meta) == []      # split: nothing to say


def test_nash_ratings_are_printed_with_the_decimals_their_width_needs():
    """A 10M-round run's Nash ratings span hundredths of a pp: one decimal printed them as
    "-0.1 [-0.1, -0.1]", which reads as certainty; the decimals follow the narrowest width."""
    from kc_sim.analysis.text import digits_for_width
    assert digits_for_width([-0.0009, -0.01], [-0.0007, 0.0]) == 3       # 0.02pp wide
    assert digits_for_width([-0.004], [0.0]) == 2                          # 0.4pp
    assert digits_for_width([-0.02], [0.0]) == 1                           # 2pp
    assert digits_for_width([math.nan, 0.0], [math.nan, 0.0]) == 1         # no width to show
    assert digits_for_width([-0.02], [0.0], least=2) == 2
