"""The import paths users and notebooks name keep working after the statistics moved to
kc_sim.stats (issue 34): the old paths give the very objects of the new homes."""

from __future__ import annotations

import importlib

import pytest

MOVED = [
    ("kc_sim.analysis.leaderboard", "fit_bt", "kc_sim.stats.bradley_terry"),
    ("kc_sim.analysis.leaderboard", "sandwich_cov", "kc_sim.stats.bradley_terry"),
    ("kc_sim.analysis.leaderboard", "Comparisons", "kc_sim.stats.bradley_terry"),
    ("kc_sim.analysis.leaderboard", "resample", "kc_sim.stats.bootstrap"),
    ("kc_sim.analysis.leaderboard", "bootstrap_interval", "kc_sim.stats.bootstrap"),
    ("kc_sim.analysis.leaderboard", "widen", "kc_sim.stats.bootstrap"),
    ("kc_sim.analysis.leaderboard", "rate_comparisons", "kc_sim.stats.ratings"),
    ("kc_sim.analysis.power", "power_of", "kc_sim.stats.power"),
    ("kc_sim.analysis.power", "deals_needed", "kc_sim.stats.power"),
    ("kc_sim.analysis.variance", "adjusted_mean", "kc_sim.stats.variates"),
    ("kc_sim.analysis.variance", "ScoreSample", "kc_sim.stats.variates"),
    ("kc_sim.analysis.coverage", "Model", "kc_sim.analysis.coverage_model"),
    ("kc_sim.analysis.coverage", "truth", "kc_sim.analysis.coverage_model"),
]


@pytest.mark.parametrize("old, name, new", MOVED)
def test_old_paths_give_the_objects_of_their_new_homes(old, name, new):
    assert getattr(importlib.import_module(old), name) is getattr(importlib.import_module(new), name)


def test_what_users_name_is_there():
    from kc_sim.analysis.leaderboard import format_fit, leaderboard  # noqa: F401
    from kc_sim.analysis.power import power_of  # noqa: F401
    from kc_sim.analysis.run_stats import RunStats
    from kc_sim.analysis.scan import scan_run  # noqa: F401
    from kc_sim.analysis.variance import run_adjusted  # noqa: F401
    from kc_sim.stats import RunStats as Numbers

    assert issubclass(RunStats, Numbers) and hasattr(RunStats, "caption") and not hasattr(Numbers, "caption")
