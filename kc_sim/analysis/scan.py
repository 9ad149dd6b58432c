"""Streaming statistics of a run folder: everything ``kc-sim plot``, ``kc-sim report``, the
experiment findings and the strategy notebook show, from one pass over the parquet parts.

:func:`scan_run` reads the parts of ``RUN_DIR/rounds/`` (and ``RUN_DIR/matches/``) one at a
time, only the columns it needs, and adds each part into a
:class:`~kc_sim.analysis.run_stats.RunStats`: per-batch
sums and counts of every statistic, exact counts, and histograms (penalty per agent,
turns per end reason). Nothing per round is kept, so the memory of a scan does not grow
with the number of rounds: it holds one part plus arrays of at most :data:`MAX_BATCHES`
entries per statistic.

**Intervals clustered by deal, from sums.** Every interval is 95% and clustered by deal
(the rotation group column ``group``; the same group number is the same deal in every
line-up of a run), from per-deal sums, by the one engine of :mod:`kc_sim.stats.intervals`
(cluster-robust standard error, Student's quantile on the deals minus one, Hall's skewness
correction): the same engine, sums and batches as the tournament's own summary
(:class:`kc_sim.stats.Tally`), so a figure of the report and the same figure of
``summary.parquet`` agree.

**Batches of deals.** A run of tens of millions of rounds has millions of deals, so the
sums are kept per *batch* of consecutive deals (:mod:`kc_sim.stats.sums`: ``batch = group //
width``, ``width = ceil(n_deals / MAX_BATCHES)``; ``n_deals`` is the number of deals per
line-up, ``manifest["schedule"]["groups_per_lineup"]``). A batch of independent deals is a
valid cluster; with ``n_deals <= MAX_BATCHES`` every batch is one deal and every figure is
exactly the one computed from all rounds in memory. When a rate is 0 or 1 (no variation)
the number of deals, not of batches, is its sample size, as without batching.
"""


from __future__ import annotations

import numpy as np
import pyarrow as pa

from kc_sim.analysis.run_stats import RunStats
from kc_sim.errors import UserError
from kc_sim.runs import RunReader, layout
from kc_sim.runs.schema import AGENT, PENALTY, TOTAL, agent_codes, seat_arrays, seat_names
from kc_sim.stats.sums import batch_width

# --- reading ------------------------------------------------------------------------------

def int_column(table, name: str, fill: int = -1) -> np.ndarray:
    """A column as int64 numpy (nulls as ``fill``)."""
    return table.column(name).fill_null(fill).to_numpy().astype(np.int64)


def _codes(table, name: str, index: dict) -> np.ndarray:
    """A column of agent names as agent codes (-1 for null or unknown)."""
    return agent_codes(table.column(name), index)


def _blocked(table) -> np.ndarray:
    col = table.column("end").combine_chunks()
    if hasattr(col, "dictionary"):
        names = col.dictionary.to_pylist()
        if "blocked" not in names:
            return np.zeros(len(col), bool)
        return (col.indices.fill_null(-1).to_numpy().astype(np.int64) == names.index("blocked"))
    return np.array([v == "blocked" for v in col.to_pylist()], bool)


def round_columns(players: int, extra=()) -> list[str]:
    """The round columns the scan reads (and ``extra`` ones)."""
    return (["lineup", "group", *extra, "first", "winner", "end", "turns", "actions"]
            + seat_names(AGENT, players) + seat_names(PENALTY, players))


def round_arrays(t, players: int, index: dict) -> dict:
    """The columns of a part of rounds as int64 arrays (nulls as -1; ``end`` as
    ``blocked``; agent names as codes of ``index``; by seat as (rows, players))."""
    agent, penalty = seat_arrays(t, players, PENALTY, index)
    return {
        "lineup": int_column(t, "lineup", 0), "group": int_column(t, "group"),
        "first": int_column(t, "first", 0), "winner": int_column(t, "winner"), "blocked": _blocked(t),
        "turns": int_column(t, "turns", 0), "actions": int_column(t, "actions", 0),
        "agent": agent, "penalty": penalty,
    }


def match_columns(players: int) -> list[str]:
    return ["lineup", "group", "rounds"] + seat_names(AGENT, players) + seat_names(TOTAL, players) + ["winners"]


def match_arrays(t, players: int, index: dict) -> dict:
    """The columns of a part of matches as arrays (as :func:`round_arrays`)."""
    return {
        "lineup": int_column(t, "lineup", 0), "group": int_column(t, "group"), "rounds": int_column(t, "rounds", 0),
        "agent": np.stack([_codes(t, f"{AGENT}{s}", index) for s in range(players)], axis=1),
        "total": np.stack([int_column(t, f"{TOTAL}{s}", 0) for s in range(players)], axis=1),
        "winners": int_column(t, "winners", 0),
    }


def by_lineup(cols: dict):
    """The rows of a part split by line-up (a part normally holds one line-up)."""
    lu = cols["lineup"]
    first = int(lu[0])
    if (lu == first).all():
        yield first, cols
        return
    for v in np.unique(lu):
        m = lu == v
        yield int(v), {k: a[m] for k, a in cols.items()}


def scan_run(run_dir) -> RunStats:
    """Read a run folder part by part (manifest, round parts, match parts when present) into
    a :class:`RunStats`. A :class:`RunStats` is returned as it is. Raises
    :class:`UserError` when the folder is missing or holds no finished rounds."""
    if isinstance(run_dir, RunStats):
        return run_dir
    reader = RunReader.open(run_dir)
    path, manifest = reader.path, reader.manifest
    labels, players, config = reader.labels, reader.players, manifest.config
    parts = reader.parts(layout.ROUNDS)
    if not parts:
        raise UserError(f"{path} holds no rounds yet ({layout.ROUNDS}/ is empty): finish the run first "
                        f"(rerun its command: {manifest.command or 'kc-sim tournament ...'})")
    index = {name: i for i, name in enumerate(labels)}
    try:
        deals = reader.n_deals()
        stats = RunStats(path=path, lineups=[list(lu) for lu in manifest.lineups], labels=labels,
                         players=players, rules=config.rules, mode=config.mode, seed=config.seed,
                         width=batch_width(deals), n_deals=deals, manifest=manifest)
        for t in reader.tables(layout.ROUNDS, round_columns(players)):
            arrays = round_arrays(t, players, index)
            del t
            for lu, sub in by_lineup(arrays) if len(arrays["group"]) else ():
                stats.add_rounds(sub, lu)
            del arrays
            stats.parts_read += 1
        if reader.parts(layout.MATCHES):
            for t in reader.tables(layout.MATCHES, match_columns(players)):
                for lu, sub in by_lineup(match_arrays(t, players, index)):
                    stats.add_matches(sub, lu)
            if stats.n_matches is None:
                stats.n_matches = 0
    except (OSError, ValueError, KeyError, pa.ArrowException) as e:
        raise UserError(f"cannot read the rounds of {path}: {e}") from None
    stats.finish()
    return stats


# --- the numbers behind the figures and tables ---------------------------------------------
# Each takes a run folder or its RunStats (see kc_sim.analysis.run_stats for the fields of the rows).

def load_stats(run_dir) -> RunStats:
    """The statistics of a run folder, streamed part by part (:func:`scan_run`); a
    :class:`~kc_sim.analysis.run_stats.RunStats` is returned as it is."""
    return scan_run(run_dir)


def head_to_head(data) -> list[dict]:
    """One row per ordered pair of agents that met: rounds together, ``score`` (the row
    agent finished with a lower penalty than the other; ties count half; in 2-player
    rounds without a block this is the win rate), ``win`` (the row agent won the round),
    ``diff`` (mean penalty, row agent minus opponent), each with its interval."""
    return load_stats(data).head_to_head()


def agent_rows(data) -> list[dict]:
    """Per agent: rounds, win rate and mean penalty with intervals."""
    return load_stats(data).agent_rows()


def position_rows(data, agent: int | None = None) -> list[dict]:
    """Win rate by position in turn order (0 plays first), over all agents or one agent."""
    return load_stats(data).position_rows(agent)


def end_rows(data) -> dict:
    """Round length and end reasons, with intervals."""
    return load_stats(data).end_rows()


def match_rows(data) -> list[dict]:
    """Per agent, when the run played matches: match win rate (a shared win counts for
    every sharer) and mean penalty total, clustered by deal (match seed group)."""
    return load_stats(data).match_rows()
