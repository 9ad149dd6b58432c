"""Why the leaderboard's percentile intervals were short (issue 22), and what replaced them:

    python experiments/bootstrap_intervals.py --players 2 --deals 20 --runs 400 --resamples 1000

Simulated runs of the coverage study's "difference" model (kc_sim.analysis.coverage), each
resampled by the leaderboard's own bootstrap (kc_sim.stats.bootstrap.resample, seed = the
run's index, so its first 200 resamples are those `kc-sim leaderboard --seed i` draws). On the
same runs and resamples it prints how often each construction of a rating's 95% interval holds
the truth (the Bradley-Terry strengths of the model, kc_sim.analysis.coverage.truth), with 200
resamples and with all of them, and how wide a percentile bound is next to the resamples'
standard deviation.
"""

from __future__ import annotations

import argparse
import math

import numpy as np

from kc_sim.analysis import coverage as C
from kc_sim.stats import t_of, z_of
from kc_sim.stats.bootstrap import bootstrap_interval, resample, widen
from kc_sim.stats.bradley_terry import fit_bt, sandwich_cov, totals


def constructions(theta, boot, units: int) -> dict:
    """The 95% intervals of ``theta`` from the resamples ``boot``: (lo, hi) by name."""
    out = {"resamples' sd, t (kc-sim)": bootstrap_interval(theta, boot, units)}
    for method in ("linear", "median_unbiased"):
        lo, hi = np.quantile(boot, [0.025, 0.975], axis=0, method=method)
        out[f"percentile ({method} quantile), widened"] = widen(theta, lo, hi, units)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--players", type=int, default=2)
    ap.add_argument("--deals", type=int, default=20)
    ap.add_argument("--runs", type=int, default=400)
    ap.add_argument("--resamples", type=int, default=1000, help="per run; the first 200 are also judged alone")
    ap.add_argument("--truth-deals", type=int, default=200_000)
    a = ap.parse_args(argv)
    model = C.Model.scenario("difference", a.players)
    truth = C.truth(model, a.truth_deals)["rating"]
    truth = np.array([truth[i] for i in range(model.n_agents)])
    rng = np.random.default_rng([7, a.players, a.deals])
    hits: dict = {}
    spread = {"sd x sqrt(g/(g-1)) / sandwich se": [], "percentile bound / (z sd), 200": [],
              f"percentile bound / (z sd), {a.resamples}": []}
    for i in range(a.runs):
        c = C.comparisons_of(model, model.rounds(rng, a.deals))
        theta, cov = fit_bt(*totals(c))
        se = np.sqrt(np.diag(sandwich_cov(c, theta, cov)))
        q = t_of(0.95, c.n_units - 1)
        hits.setdefault("sandwich, t (--bootstrap 0)", []).append(np.abs(theta - truth) <= q * se)
        boot_all, _ = resample(c, a.resamples, seed=i)
        for b, boot in ((200, boot_all[:200]), (a.resamples, boot_all)):
            for name, (lo, hi) in constructions(theta, boot, c.n_units).items():
                hits.setdefault(f"{name}, {b} resamples", []).append((lo <= truth) & (truth <= hi))
            sd = boot.std(axis=0, ddof=1)
            lo, hi = np.quantile(boot, [0.025, 0.975], axis=0)
            bound = np.r_[theta - lo, hi - theta] / (z_of(0.95) * np.r_[sd, sd])
            spread[f"percentile bound / (z sd), {b}"].append(bound)
        g = c.n_units
        spread["sd x sqrt(g/(g-1)) / sandwich se"].append(boot_all.std(axis=0, ddof=1) * math.sqrt(g / (g - 1)) / se)
    print(f"{a.players} players, {a.deals} deals, {a.runs} runs, {a.resamples} resamples per run\n")
    print("| rating interval | coverage |\n|---|---|")
    for name, v in hits.items():
        print(f"| {name} | {100 * np.mean(v):.1f}% |")
    print("\n| ratio | mean | sd |\n|---|---|---|")
    for name, v in spread.items():
        v = np.concatenate(v)
        print(f"| {name} | {v.mean():.3f} | {v.std():.3f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
