"""Cross-fitted control variates (kc_sim.analysis.variance): unbiased on synthetic data with
a known mean, intervals that cover, the factor 1/(1-R^2), and a run folder read part by
part giving exactly the all-in-memory result."""

import numpy as np
import pytest

from kc_sim.analysis.variance import (
    FoldStats,
    adjusted_arrays,
    adjusted_mean,
    fold_of,
    run_adjusted,
)
from kc_sim.core.features import deal_features, expected_features
from kc_sim.game.rules import parse_rules
from kc_sim.stats import pair_deal_scores
from kc_sim.runs import read_rounds
from kc_sim.runs.manifest import read_manifest_json as read_manifest
from kc_sim.runs.schema import agent_codes
from kc_sim.tournament.run import run_tournament


def _synthetic(rng, n, beta, noise, mean=0.3):
    F = len(beta)
    mu = np.linspace(1, 2, F)
    X = mu + rng.standard_normal((n, F))
    y = mean + (X - mu) @ beta + noise * rng.standard_normal(n)
    return np.arange(n), y, X, mu


def test_folds_are_balanced_and_fixed():
    f = fold_of(np.arange(100_000), 5)
    assert np.bincount(f).min() > 19_500 and f.max() == 4
    assert (fold_of(np.arange(10), 5) == f[:10]).all()


def test_unbiased_covers_and_factor_matches_r2():
    rng = np.random.default_rng(0)
    beta, noise = np.array([0.3, -0.2, 0.1]), 0.3            # R^2 = 0.14 / (0.14 + 0.09)
    r2 = beta @ beta / (beta @ beta + noise ** 2)
    est, cover, factor, r2s, se = [], 0, [], [], []
    reps = 300
    for _ in range(reps):
        deals, y, X, mu = _synthetic(rng, 1000, beta, noise)
        r = adjusted_arrays(deals, y, X, mu)
        est.append(r.adj)
        lo, hi = r.interval()
        cover += lo <= 0.3 <= hi
        factor.append(r.factor)
        r2s.append(r.r2)
        se.append(r.adj_se)
    est = np.array(est)
    # unbiased: the mean of the estimates is 0.3 within 3 standard errors of that mean
    assert abs(est.mean() - 0.3) < 3 * est.std() / np.sqrt(reps)
    # the reported standard error is the spread of the estimates
    assert np.mean(se) == pytest.approx(est.std(), rel=0.12)
    assert 0.92 <= cover / reps <= 0.98
    assert np.mean(r2s) == pytest.approx(r2, abs=0.01)
    assert np.mean(factor) == pytest.approx(1 / (1 - r2), rel=0.03)


def test_no_signal_no_gain_and_no_bias():
    rng = np.random.default_rng(1)
    est = []
    for _ in range(200):
        deals, y, X, mu = _synthetic(rng, 500, np.zeros(4), 0.5)
        r = adjusted_arrays(deals, y, X, mu)
        assert 0.9 < r.factor < 1.05
        est.append(r.adj)
    assert abs(np.mean(est) - 0.3) < 3 * np.std(est) / np.sqrt(200)


def test_estimated_mu_costs_what_it_should():
    rng = np.random.default_rng(2)
    deals, y, X, mu = _synthetic(rng, 5000, np.array([0.5, 0.5]), 0.1)
    exact = adjusted_arrays(deals, y, X, mu)
    cov = np.eye(2) / 5000                        # mu estimated from as many deals as played
    est = adjusted_arrays(deals, y, X, mu, cov)
    assert est.adj == exact.adj and exact.mu_se == 0
    assert est.adj_se ** 2 == pytest.approx(exact.adj_se ** 2 + est.mu_se ** 2)
    assert est.mu_se ** 2 == pytest.approx(0.5 / 5000, rel=0.05)  # beta' cov beta, beta ~ (0.5, 0.5)
    assert est.factor < exact.factor


def test_streaming_parts_equal_computation_in_memory(tmp_path):
    out = tmp_path / "run"
    # 4 agents at 3 seats: each pair meets in 2 line-ups, so a deal is spread over two parts
    run_tournament(["greedy", "merger", "random", "king-first"], players=3, rounds=4 * 6 * 150, seed=4, out=out,
                   jobs=1, backend="sequential", quiet=True, chunk_size=6 * 40)
    assert len(list((out / "rounds").glob("part-*.parquet"))) > 4
    res = run_adjusted(out, expectation_deals=20_000, expectation_seed=9)
    man = read_manifest(out)
    labels, rules = man["config"]["labels"], parse_rules(man["config"]["rules"])
    df = read_rounds(out)
    import pyarrow as pa
    index = {n: i for i, n in enumerate(labels)}
    codes = np.stack([agent_codes(pa.chunked_array([pa.array(df[f"agent_{s}"])]), index) for s in range(3)], 1)
    pen = np.stack([df[f"penalty_{s}"].fillna(-1).to_numpy(np.int64) for s in range(3)], 1)
    group = df["group"].to_numpy(np.int64)
    pairs = [(i, j) for i in range(4) for j in range(i + 1, 4)]
    deals, score, n = pair_deal_scores(group, codes, pen, pairs)
    first = np.unique(group, return_index=True)[1]
    X = deal_features(df["seed"].to_numpy(np.int64)[first], df["dealer"].to_numpy(np.int64)[first], 3, rules)
    mu, cov = expected_features(3, rules, 20_000, 9)
    assert len(res) == 6 and all(r.est.deals == 150 for r in res)
    for r, (a, b), p in zip(res, pairs, range(6)):
        assert (r.a, r.b) == (labels[a], labels[b])
        mem = adjusted_arrays(deals, score[:, p], X, mu, cov)
        assert r.rounds == n[:, p].sum() and r.rounds_per_deal == 12
        for field in ("mean", "se", "adj", "adj_se", "r2", "factor"):
            assert getattr(r.est, field) == pytest.approx(getattr(mem, field), rel=1e-9, abs=1e-12), field


def test_fold_stats_merge_is_adding():
    rng = np.random.default_rng(3)
    deals, y, X, mu = _synthetic(rng, 900, np.array([0.2, 0.1]), 0.2)
    a, b, whole = FoldStats(2), FoldStats(2), FoldStats(2)
    a.add(deals[:400], y[:400], X[:400])
    b.add(deals[400:], y[400:], X[400:])
    whole.add(deals, y, X)
    m = adjusted_mean(a.merge(b), mu)
    w = adjusted_mean(whole, mu)
    assert m.adj == pytest.approx(w.adj, rel=1e-12) and m.adj_se == pytest.approx(w.adj_se, rel=1e-12)
