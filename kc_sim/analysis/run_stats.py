"""The statistics of one run as the figures, the report and the notebook show them.

:class:`RunStats` is :class:`kc_sim.stats.run_stats.RunStats` (every number, from the run's
tally and one pass over its rows) with what only presentation needs: the rule set's short
name and the caption line under every figure and table. :func:`kc_sim.analysis.scan.scan_run`
returns one.
"""

from __future__ import annotations

from dataclasses import dataclass

from kc_sim.analysis.text import rules_label
from kc_sim.runs import Manifest
from kc_sim.stats.run_stats import ROUND_VALUES
from kc_sim.stats.run_stats import RunStats as _Numbers

__all__ = ["ROUND_VALUES", "RunStats"]


@dataclass
class RunStats(_Numbers):
    """The statistics of a run (:class:`kc_sim.stats.run_stats.RunStats`), with its caption
    and the run's manifest (what the report says of the schedule and the stop)."""

    manifest: Manifest | None = None

    @property
    def rules_label(self) -> str:
        """The rule set's short name (:func:`kc_sim.analysis.text.rules_label`)."""
        return rules_label(self.rules)

    def caption(self) -> str:
        """The line under every figure and table: rules, players, size, agents, seed, intervals."""
        size = f"{self.n:,} rounds ({self.deals:,} deals)"
        if self.n_matches is not None:
            size = f"{self.n_matches:,} matches, " + size
        agents = ", ".join(self.labels)
        return (f"rules: {self.rules_label} | {self.players} players | {size} | agents: {agents} | "
                f"seed {self.seed} | intervals: 95%, clustered by deal")
