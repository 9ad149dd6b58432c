"""experiments/decided_share.py, the script behind issue 36's figures (the share of the decided
rounds an agent wins, and its penalty difference, clustered by deal): it agrees with the
rows and with kc-sim's own summary (and so does the win rate of all rounds), its interval with a bootstrap over deals, and a folder
it cannot use is a one-line error."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from tests.faults.hostile import kc

SCRIPT = Path(__file__).resolve().parents[2] / "experiments" / "decided_share.py"
LINE = re.compile(r"^(\S+) vs (\S+): ([\d,]+) rounds, ([\d,]+) decided; decided share ([\d.]+)% "
                  r"\[([\d.]+), ([\d.]+)\]; win rate ([\d.]+)% \[([\d.]+), ([\d.]+)\] of all rounds; "
                  r"penalty diff ([-+][\d.]+) \[([-+][\d.]+), ([-+][\d.]+)\]$")


def _script(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True,
                          timeout=120)


def _module():
    spec = importlib.util.spec_from_file_location("decided_share", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def bench(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("share") / "run"
    r = kc("bench-agent", "greedy", "--baselines", "random", "--rounds", "2000", "--seed", "3", "-j", "1", "--quiet",
           "-o", out)
    assert r.returncode == 0, r.stderr
    return out


def test_the_figures_agree_with_the_rows_and_the_command(bench):
    r = _script(bench, "greedy")
    assert r.returncode == 0, r.stderr
    m = LINE.match(r.stdout.strip())
    assert m, r.stdout
    agent, other, rounds, decided, share, lo, hi, rate, rlo, rhi, diff, dlo, dhi = m.groups()
    assert (agent, other, rounds) == ("greedy", "random", "2,000")
    rows = pd.read_parquet(bench / "rounds")
    out = rows[rows["end"] == "out"]
    assert int(decided.replace(",", "")) == len(out)
    assert float(share) == pytest.approx(100 * (out["winner_agent"] == "greedy").mean(), abs=0.051)
    assert float(lo) < float(share) < float(hi) and float(dlo) < float(diff) < float(dhi)
    # every round of greedy against random is decided: the share is kc-sim's win rate, and both
    # intervals (clustered by deal) and the paired penalty difference are kc-sim's
    assert len(out) == len(rows) and (rate, rlo, rhi) == (share, lo, hi)
    summary = pd.read_parquet(bench / "summary.parquet")
    pair = summary[(summary["agent"] == "greedy") & (summary["opponent"] == "random")].iloc[0]
    assert (float(lo), float(hi)) == pytest.approx((100 * pair["win_lo"], 100 * pair["win_hi"]), abs=0.06)
    assert (float(dlo), float(dhi)) == pytest.approx((pair["diff_lo"], pair["diff_hi"]), abs=0.006)


def test_at_three_seats_the_difference_is_against_the_others_mean(tmp_path):
    """A 3-seat tournament's rows: the decided share, the win rate of all rounds and the penalty
    difference (the agent's penalty less the mean of the two others') recounted here from the
    rows, seat by seat."""
    out = tmp_path / "t3"
    r = kc("tournament", "--agents", "greedy,random,random", "--players", "3", "--rounds", "600", "--seed", "5",
           "-j", "1", "--quiet", "-o", out)
    assert r.returncode == 0, r.stderr
    s = _script(out, "greedy")
    assert s.returncode == 0, s.stderr
    m = LINE.match(s.stdout.strip())
    assert m, s.stdout
    rows = pd.read_parquet(out / "rounds")
    diffs, wins = [], []
    for _, row in rows.iterrows():
        pens = {row[f"agent_{i}"]: row[f"penalty_{i}"] for i in range(3)}
        mine = pens.pop("greedy")
        diffs.append(mine - sum(pens.values()) / 2)
        if row["end"] == "out":
            wins.append(row["winner_agent"] == "greedy")
    assert m.group(2) == "random,random#2" and int(m.group(4).replace(",", "")) == len(wins)
    assert float(m.group(5)) == pytest.approx(100 * np.mean(wins), abs=0.051)
    assert float(m.group(8)) == pytest.approx(100 * (rows["winner_agent"] == "greedy").mean(), abs=0.051)
    assert float(m.group(9)) < float(m.group(8)) < float(m.group(10))
    assert float(m.group(11)) == pytest.approx(np.mean(diffs), abs=0.0051)


def test_the_interval_is_a_bootstrap_over_deals():
    """Deals with blocked rounds: the linearised standard error of the ratio of per-deal sums
    is within 10% of scipy's bootstrap over the same deals."""
    module = _module()
    rng = np.random.default_rng(36)
    deals = 1500
    decided = rng.integers(0, 3, deals).astype(float)            # 0, 1 or 2 of a deal's two rounds
    win = rng.binomial(decided.astype(int), 0.45).astype(float)
    diff = rng.normal(0.8, 6.0, deals)
    frame = pd.DataFrame({"win": win, "decided": decided, "diff": diff, "n": np.full(deals, 2.0)})
    r = module.interval(frame)
    assert r["share"] == pytest.approx(win.sum() / decided.sum())
    assert r["rate"] == pytest.approx(win.sum() / (2 * deals)) and r["rate"] < r["share"]    # blocked rounds count
    boot = stats.bootstrap((win, decided), lambda w, d, axis=-1: w.sum(axis) / d.sum(axis), paired=True,
                           vectorized=True, n_resamples=4000, method="percentile", random_state=1)
    t = stats.t.ppf(0.975, deals - 1)
    assert (r["share_hi"] - r["share_lo"]) / (2 * t) == pytest.approx(boot.standard_error, rel=0.1)


@pytest.mark.parametrize("case", ["no rounds", "damaged part", "unknown agent"])
def test_a_folder_it_cannot_use_is_one_line(bench, tmp_path, case):
    folder, agent, said = tmp_path, "greedy", "no round rows"
    if case == "damaged part":
        (tmp_path / "rounds").mkdir()
        (tmp_path / "rounds" / "part-00000.parquet").write_bytes(b"PAR1 not parquet")
        said = "cannot be read as parquet"
    elif case == "unknown agent":
        folder, agent, said = bench, "nobody", "no agent 'nobody'"
    r = _script(folder, agent)
    assert r.returncode == 2 and r.stdout == "", (r.returncode, r.stdout, r.stderr)
    assert said in r.stderr and "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
