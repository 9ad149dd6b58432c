"""Experiments: one TOML file per question, run with ``kc-sim run experiments/NAME.toml``.

An experiment file names a question, lists the tournament runs that answer it and says
which comparison to report. ``kc-sim run`` plays every run (through
:func:`kc_sim.tournament.run.run_tournament`, so an interrupted experiment resumes where it
stopped), then writes ``findings.md`` with the numbers and their 95% intervals next to
the run folders (default ``results/experiments/<name>/``; with ``--scale`` other than 1,
``results/experiments/<name>_scale<s>/``, so a quick look never collides with the full run).

The file's schema and its checks: :mod:`~kc_sim.analysis.experiments.schema`; playing the
runs: :mod:`~kc_sim.analysis.experiments.running`; the markdown:
:mod:`~kc_sim.analysis.experiments.findings`.

Comparisons (every interval is 95% and clustered by deal, see :mod:`kc_sim.stats`):

* ``seats``: per run, the win rate at each position in turn order (1 plays first), the
  first seat's edge over an equal share and over the last seat, and blocked rounds.
* ``head_to_head``: per run and pair of agents that met, over the rounds both sat in:
  both win rates and their difference, the mean penalty difference in the same round,
  how often the agent finishes ahead of the opponent and, with 2 players, the deals one
  agent won from both seats; a verdict per run and pair.
* ``rules``: per run, round length, blocked rounds, the first seat's edge, the mean
  penalty and each agent's win rate (and, for matches, rounds per match and match win
  rates); then each run's change from its baseline, paired by deal when both runs
  played the same deals (same seed, agents and size), with the share of rounds whose
  result (winner or block) changed.

* ``stopping``: for runs that stop early (``until = "decided"``, usually with ``repeat = N``:
  N runs with consecutive seeds): the stops and the rounds used; on A/A runs the
  false-decision rate with its Wilson interval against ``alpha``; on runs with a real
  difference the rounds used against fixed-size runs (:mod:`~kc_sim.analysis.experiments.stopping`).

``--scale s`` multiplies every run's ``rounds``/``matches``/``max_rounds`` (at least one deal)
and the number of repeats of a repeated run (at least 2).

The findings are computed from one streaming pass over each run's parquet parts
(:func:`kc_sim.analysis.scan.scan_run`: per-batch sums of every figure, batches of consecutive
deals), and, for a run paired with its baseline, one pass over both runs side by side
(:func:`kc_sim.analysis.compare.compare_runs`), so runs of any size fit in memory.
"""

from __future__ import annotations

from kc_sim.analysis.experiments.findings import FINDINGS_FILE, findings_markdown
from kc_sim.analysis.experiments.running import ExperimentResult, run_experiment
from kc_sim.analysis.experiments.schema import (
    EXPERIMENTS_DIR,
    KINDS,
    Experiment,
    RunSpec,
    default_out,
    load_experiment,
    parse_experiment,
)
from kc_sim.analysis.experiments.stopping import false_decisions, read_stop, replay

__all__ = ["EXPERIMENTS_DIR", "FINDINGS_FILE", "KINDS", "Experiment", "ExperimentResult", "RunSpec", "default_out",
           "false_decisions", "findings_markdown", "load_experiment", "parse_experiment", "read_stop", "replay",
           "run_experiment"]
