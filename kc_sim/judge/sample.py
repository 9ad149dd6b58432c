"""Judging a random sample of a file's records, summed up per agent (``kc-sim analyse --sample N``,
the run analysis and the report's decision-analysis section).

The sample: ``n`` distinct record indices drawn uniformly without replacement by numpy's
generator seeded with ``seed`` (the same seed then seeds the judge's worlds), judged in file
order. A record's figures do not depend on which others were drawn
(:mod:`kc_sim.judge.analyse`: the worlds of record ``i`` come from ``derive(seed, i)``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from kc_sim.errors import UserError
from kc_sim.judge.analyse import analyse_file
from kc_sim.judge.by_agent import agent_figures

__all__ = ["SAMPLE_FORMAT", "analyse_sample", "count_records", "sample_indices"]

#: the format name of a sampled analysis (``--json``): the analysis report plus the sample and
#: the per-agent figures
SAMPLE_FORMAT = "kc-sim/analysis-sample/1"


def count_records(path) -> int:
    """The records in a JSON Lines file: its non-blank lines (each is checked when judged)."""
    try:
        with open(path, "rb") as f:
            return sum(1 for line in f if line.strip())
    except OSError as e:
        raise UserError(f"cannot read {path}: {e.strerror or e}") from None


def sample_indices(count: int, n: int, seed: int) -> list[int]:
    """``n`` distinct indices of ``range(count)`` drawn at random from ``seed``, sorted."""
    if n < 1:
        raise UserError(f"bad --sample {n}: expected 1 or more rounds")
    if n > count:
        raise UserError(f"bad --sample {n}: only {count} record(s) to draw from")
    if not 0 <= seed < 1 << 63:
        raise UserError(f"bad --seed {seed}: expected 0 to 2**63 - 1")
    return sorted(int(i) for i in np.random.default_rng(seed).choice(count, size=n, replace=False))


def analyse_sample(path, n: int | None, *, seed: int = 0, source: str | None = None, **options) -> dict:
    """The analysis of ``n`` records of ``path`` drawn at random (None: every record) with the
    per-agent figures (:func:`kc_sim.judge.by_agent.agent_figures`) under ``agents``;
    ``options`` as :func:`kc_sim.judge.analyse.analyse_file` (seats, evaluator, budget, ...).
    ``source`` names what was sampled (a run folder) when not the file itself."""
    path = Path(path)
    count = count_records(path)
    if count == 0:
        raise UserError(f"{path}: no game records: expected a file of kc-sim/game/1 records (JSON Lines)")
    chosen = sample_indices(count, n, seed) if n is not None else list(range(count))
    report = analyse_file(path, rounds=chosen, seed=seed, **options)
    return {"format": SAMPLE_FORMAT, "source": source or str(path), "records": count, "sample": len(chosen),
            "sampled": chosen, **{k: v for k, v in report.items() if k != "format"},
            "agents": agent_figures(report)}
