"""Tests of the statistics: intervals, the tally and the summary tables."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from kc_sim.stats import Tally, mean_ci, summarize, wilson


def test_wilson_known_values():
    lo, hi = wilson(5, 10)
    assert lo == pytest.approx(0.2366, abs=1e-4) and hi == pytest.approx(0.7634, abs=1e-4)
    lo, hi = wilson(0, 20)
    assert lo == 0.0 and hi == pytest.approx(0.1611, abs=1e-4)
    lo, hi = wilson(20, 20)
    assert hi == 1.0 and lo == pytest.approx(0.8389, abs=1e-4)
    lo, hi = wilson(np.array([1, 0]), np.array([4, 0]))
    assert lo[0] < 0.25 < hi[0] and math.isnan(lo[1]) and math.isnan(hi[1])


def test_mean_ci_matches_direct_computation():
    x = np.array([3.0, 0, 12, 7, 1, 1, 4])
    mean, lo, hi = mean_ci(x.sum(), (x * x).sum(), len(x))
    half = 1.959963984540054 * x.std(ddof=1) / math.sqrt(len(x))
    assert mean == pytest.approx(x.mean())
    assert lo == pytest.approx(x.mean() - half) and hi == pytest.approx(x.mean() + half)
    m, lo1, hi1 = mean_ci(5.0, 25.0, 1)
    assert m == 5.0 and math.isnan(lo1) and math.isnan(hi1)


def _rounds():
    """Six rounds of three seats between agents a, b, c (seat 2 absent in the last one)."""
    return pd.DataFrame({
        "agent_0": ["a", "b", "c", "a", "b", "a"],
        "agent_1": ["b", "c", "a", "b", "c", "c"],
        "agent_2": ["c", "a", "b", "c", "a", "b"],
        "penalty_0": [0, 5, 3, 2, 0, 4],
        "penalty_1": [4, 0, 3, 2, 7, 0],
        "penalty_2": [11, 2, 0, 2, 3, pd.NA],
        "winner": [0, 1, 2, pd.NA, 0, 1],
    }).astype({"penalty_2": "Int16", "winner": "Int8"})


def test_agent_rows_by_hand():
    s = summarize(_rounds(), names=["a", "b", "c"])
    rows = s[s["opponent"].isna()].set_index("agent")
    # a: penalties 0,2,3,2,3,4; wins round 0 (seat 0; also seat 0 in rounds 3 and 5)
    assert rows.loc["a", "rounds"] == 6 and rows.loc["a", "wins"] == 1
    assert rows.loc["a", "mean_penalty"] == pytest.approx(14 / 6)
    assert rows.loc["a", "win_rate_seat_0"] == pytest.approx(1 / 3)
    # b is not in round 5 (null penalty): penalties 4,5,0,2,0; wins rounds 2 and 4
    assert rows.loc["b", "rounds"] == 5 and rows.loc["b", "wins"] == 2
    assert rows.loc["b", "mean_penalty"] == pytest.approx(11 / 5)
    assert rows.loc["c", "rounds"] == 6 and rows.loc["c", "wins"] == 2
    assert rows.loc["a", "win_lo"] < 1 / 6 < rows.loc["a", "win_hi"]


def test_head_to_head_by_hand():
    s = summarize(_rounds(), names=["a", "b", "c"])
    h = s[s["opponent"].notna()].set_index(["agent", "opponent"])
    ab = h.loc[("a", "b")]
    # rounds with both a and b: 0..4; a's penalties 0,2,3,2,3, b's 4,5,0,2,0
    assert ab["rounds"] == 5 and ab["wins"] == 1
    assert ab["beats"] == 2 and ab["ties"] == 1
    assert ab["penalty_diff"] == pytest.approx((-4 - 3 + 3 + 0 + 3) / 5)
    ba = h.loc[("b", "a")]
    assert ba["beats"] == 2 and ba["wins"] == 2 and ba["penalty_diff"] == pytest.approx(-ab["penalty_diff"])
    assert not any(s["agent"].isna())


def test_head_to_head_rows_and_the_paired_finishes_ahead_share():
    df = pd.DataFrame({"agent_0": ["x", "y", "x", "y"], "agent_1": ["y", "x", "y", "x"],
                       "penalty_0": [0, 3, 2, 2], "penalty_1": [2, 0, 2, 0], "winner": [0, 1, -1, 1],
                       "group": [0, 0, 1, 1]})
    assert summarize(df, head_to_head=False)["opponent"].isna().all()
    pairs = summarize(df).set_index(["agent", "opponent"]).loc[[("x", "y"), ("y", "x")]]
    # deal 0: x ahead from both seats -> 1; deal 1: a tie, then x ahead -> 0.75 for x
    assert pairs.loc[("x", "y"), "ahead"] == pytest.approx((1 + 0.75) / 2)
    assert pairs.loc[("y", "x"), "ahead"] == pytest.approx((0 + 0.25) / 2)
    sd = np.std([1, 0.75], ddof=1)
    assert pairs.loc[("x", "y"), "ahead_hi"] - pairs.loc[("x", "y"), "ahead"] == pytest.approx(1.959964 * sd / 2 ** .5)


def test_matches_in_the_tally():
    t = Tally(2, 2)
    t.add_matches(np.array([[0, 1], [1, 0], [0, 1]]), np.array([[10, 30], [25, 25], [26, 4]]),
                  np.array([1, 3, 2]))
    df = t.agent_table(["p", "q"])
    assert list(df["matches"]) == [3, 3]
    assert list(df["match_wins"]) == [2, 2]          # the shared win counts for both
    assert df.loc[0, "mean_total"] == pytest.approx((10 + 25 + 26) / 3)
