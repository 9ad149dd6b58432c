"""The run folder on disk: parquet schemas, writing parts, reading a run back.

Layout of a run folder (see docs/tournaments.md and docs/formats.md)::

    manifest.json        configuration, versions, chunks and their state
    rounds/part-00000.parquet ...   one part per chunk, one row per round
    matches/part-00000.parquet ...  (matches only) one row per match, per chunk
    matches.parquet      (matches only) every match, in chunk order
    summary.parquet      per-agent figures, head-to-head rows with more than two agents
    records.jsonl        (with --records K) K game records

Round columns (``k`` seats; seats are match seats when matches are played):

=================  ==============  ==================================================
chunk              int32           chunk that played the round (part file number)
lineup             int16           line-up index (manifest ``schedule.lineups``)
group              int64           rotation group = deal number (same deals in every line-up)
rotation           int8            seating rotation r: line-up position i sits in seat (i + r) % k
match              int64, null     match id when matches are played
match_round        int16, null     round number in the match (0 first)
seed               int64           deal seed of the round
players            int8            seats dealt in (fewer than k after an elimination)
dealer, first      int8            dealer seat, seat of the first player
agent_<s>          dictionary      agent name in seat s (one dictionary for the run)
penalty_<s>        int16, null     penalty of seat s (null: seat not in the round)
winner             int8, null      winning seat, null when the round was blocked
winner_agent       dictionary      its agent name, null when blocked
end                dictionary      ``out`` or ``blocked``
turns, actions     int32           turns started, placements and pile moves made
stock_left         int16           cards left in the stock
=================  ==============  ==================================================

Match columns: chunk, lineup, group, rotation, match, seed (match seed), rounds,
agent_<s>, total_<s> (int32 penalty total), winners (int16 bit mask of the seats
sharing the win), win_<s> (bool: seat s shares the win).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

# pyarrow and pandas are imported inside the functions that need them, so that the
# tournament can check a run folder and start its workers before paying for them.

ROUNDS_DIR = "rounds"
MATCHES_DIR = "matches"
MATCHES_FILE = "matches.parquet"
SUMMARY_FILE = "summary.parquet"
MANIFEST_FILE = "manifest.json"
RECORDS_FILE = "records.jsonl"
TALLY_KEY = "kc_sim.tally"             # round part metadata: the chunk's summary statistics (JSON)
END_VALUES = ("out", "blocked")        # end codes 1, 2 of the core


def part_name(chunk: int) -> str:
    return f"part-{chunk:05d}.parquet"


def _nullable(values: np.ndarray, dtype) -> pa.Array:
    """``values`` as an arrow array with negative entries as nulls."""
    import pyarrow as pa
    return pa.array(values.astype(dtype, copy=False), mask=values < 0)


def _names(codes: np.ndarray, names: pa.Array) -> pa.DictionaryArray:
    """Agent indices (negative: null) as a dictionary column over the run's agent names."""
    import pyarrow as pa
    idx = pa.array(codes.astype(np.int16, copy=False), mask=codes < 0)
    return pa.DictionaryArray.from_arrays(idx, names)


def seat_agents(lineup, rotation: np.ndarray) -> np.ndarray:
    """(rows, k) agent index by seat: in rotation r, line-up position i sits in seat
    ``(i + r) % k`` (see :mod:`kc_sim.tournament.schedule`)."""
    lu = np.asarray(lineup, dtype=np.int64)
    k = len(lu)
    return lu[(np.arange(k)[None, :] - np.asarray(rotation, dtype=np.int64)[:, None]) % k]


def _lineup_columns(cols: dict, lineup, k: int, names: pa.Array) -> tuple[dict, np.ndarray]:
    """``agent_<s>`` columns of a chunk from its line-up and each row's rotation."""
    seat_agent = seat_agents(lineup, cols["rotation"])
    return {f"agent_{s}": _names(seat_agent[:, s], names) for s in range(k)}, seat_agent


def rounds_table(cols: dict, chunk: int, lineup_index: int, lineup, agent_names) -> pa.Table:
    """The arrow table of one chunk's rounds from the compact arrays a worker returns."""
    import pyarrow as pa
    names = pa.array(list(agent_names), pa.string())
    pen = cols["penalty"]
    n, k = pen.shape
    agents, seat_agent = _lineup_columns(cols, lineup, k, names)
    winner = cols["winner"].astype(np.int64)
    win_agent = np.where(winner >= 0, seat_agent[np.arange(n), np.maximum(winner, 0)], -1)
    data = {
        "chunk": pa.array(np.full(n, chunk, np.int32)),
        "lineup": pa.array(np.full(n, lineup_index, np.int16)),
        "group": pa.array(cols["group"].astype(np.int64, copy=False)),
        "rotation": pa.array(cols["rotation"].astype(np.int8, copy=False)),
        "match": _nullable(cols["match"], np.int64),
        "match_round": _nullable(cols["match_round"], np.int16),
        "seed": pa.array(cols["seed"].astype(np.int64, copy=False)),
        "players": pa.array((pen >= 0).sum(axis=1).astype(np.int8)),
        "dealer": pa.array(cols["dealer"].astype(np.int8, copy=False)),
        "first": pa.array(cols["first"].astype(np.int8, copy=False)),
        **agents,
        **{f"penalty_{s}": _nullable(pen[:, s], np.int16) for s in range(k)},
        "winner": _nullable(winner, np.int8),
        "winner_agent": _names(win_agent, names),
        "end": pa.DictionaryArray.from_arrays(pa.array((cols["end"] - 1).astype(np.int8)),
                                              pa.array(END_VALUES, pa.string())),
        "turns": pa.array(cols["turns"].astype(np.int32, copy=False)),
        "actions": pa.array(cols["actions"].astype(np.int32, copy=False)),
        "stock_left": pa.array(cols["stock_left"].astype(np.int16, copy=False)),
    }
    return pa.table(data)


def matches_table(cols: dict, chunk: int, lineup_index: int, lineup, agent_names) -> pa.Table:
    """The arrow table of one chunk's matches."""
    import pyarrow as pa
    names = pa.array(list(agent_names), pa.string())
    total = cols["total"]
    n, k = total.shape
    agents, _ = _lineup_columns(cols, lineup, k, names)
    winners = cols["winners"].astype(np.int64)
    data = {
        "chunk": pa.array(np.full(n, chunk, np.int32)),
        "lineup": pa.array(np.full(n, lineup_index, np.int16)),
        "group": pa.array(cols["group"].astype(np.int64, copy=False)),
        "rotation": pa.array(cols["rotation"].astype(np.int8, copy=False)),
        "match": pa.array(cols["match"].astype(np.int64, copy=False)),
        "seed": pa.array(cols["seed"].astype(np.int64, copy=False)),
        "rounds": pa.array(cols["rounds"].astype(np.int16, copy=False)),
        **agents,
        **{f"total_{s}": pa.array(total[:, s].astype(np.int32)) for s in range(k)},
        "winners": pa.array(winners.astype(np.int16)),
        **{f"win_{s}": pa.array(((winners >> s) & 1).astype(bool)) for s in range(k)},
    }
    return pa.table(data)


# --- writing ---------------------------------------------------------------------

def write_atomic(table: pa.Table, path: Path, metadata: dict | None = None) -> Path:
    """Write a parquet file (zstd) under a hidden temporary name, then rename it into place,
    so a part is either complete or absent. ``metadata`` (str -> str, None values left
    out) is added to the file's key-value metadata."""
    import pyarrow.parquet as pq
    path = Path(path)
    extra = {k: v for k, v in (metadata or {}).items() if v is not None}
    if extra:
        table = table.replace_schema_metadata({**(table.schema.metadata or {}), **extra})
    tmp = path.with_name(f".{path.name}.tmp")
    pq.write_table(table, tmp, compression="zstd")
    os.replace(tmp, path)
    return path


def write_json_atomic(obj, path: Path) -> None:
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(obj, indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def clean_temporaries(run_dir: Path) -> None:
    """Remove half-written files left by an interrupted run."""
    for p in Path(run_dir).rglob(".*.tmp"):
        p.unlink(missing_ok=True)


def merge_parts(part_dir: Path, out: Path) -> Path | None:
    """Stream every part of ``part_dir`` (in chunk order) into one parquet file."""
    import pyarrow.parquet as pq
    parts = sorted(Path(part_dir).glob("part-*.parquet"))
    if not parts:
        return None
    tmp = out.with_name(f".{out.name}.tmp")
    writer = None
    try:
        for p in parts:
            t = pq.read_table(p)
            if writer is None:
                writer = pq.ParquetWriter(tmp, t.schema, compression="zstd")
            writer.write_table(t)
    finally:
        if writer is not None:
            writer.close()
    os.replace(tmp, out)
    return out


# --- reading ---------------------------------------------------------------------

def parts(run_dir, which: str = ROUNDS_DIR) -> list[Path]:
    """Part files of a run in chunk order."""
    return sorted((Path(run_dir) / which).glob("part-*.parquet"))


def agent_codes(column, index: dict) -> np.ndarray:
    """An ``agent_<s>`` column (dictionary or plain strings) as agent indices from
    ``index`` (name -> index); -1 for null or a name not in ``index``."""
    col = column.combine_chunks()
    if not hasattr(col, "dictionary"):          # a plain string column
        return np.array([index.get(v, -1) if v is not None else -1 for v in col.to_pylist()], np.int64)
    lookup = np.array([index.get(x, -1) for x in col.dictionary.to_pylist()] + [-1], np.int64)
    return lookup[col.indices.fill_null(len(lookup) - 1).to_numpy().astype(np.int64)]


def iter_codes(run_dir, names, which: str = ROUNDS_DIR, values: str = "penalty_", paths=None):
    """Per part (every part of ``which``, or the files ``paths``): (agent indices by seat,
    ``values<s>`` by seat with nulls as -1, extra) where extra is the ``winner`` (rounds) or
    ``winners`` (matches) column; reads only those columns, one part at a time."""
    import pyarrow.parquet as pq
    index = {n: i for i, n in enumerate(names)}
    extra = "winner" if which == ROUNDS_DIR else "winners"
    for p in parts(run_dir, which) if paths is None else paths:
        schema = pq.read_schema(p)
        k = sum(1 for f in schema.names if f.startswith("agent_"))
        cols = [f"agent_{s}" for s in range(k)] + [f"{values}{s}" for s in range(k)] + [extra]
        t = pq.read_table(p, columns=cols)
        codes = np.empty((t.num_rows, k), np.int64)
        vals = np.empty((t.num_rows, k), np.int64)
        for s in range(k):
            codes[:, s] = agent_codes(t.column(f"agent_{s}"), index)
            vals[:, s] = t.column(f"{values}{s}").fill_null(-1).to_numpy()
        yield codes, vals, t.column(extra).fill_null(-1).to_numpy().astype(np.int64)


def run_tally(run_dir, names, players: int):
    """``(Tally, rounds)`` of a run: each round part's tally is read from its metadata
    (written by the worker that played the chunk), so no rounds are read; a part without
    one (written by an older kc-sim) is tallied from its rows."""
    import pyarrow.parquet as pq

    from kc_sim.stats import Tally

    tally, n_rounds, missing = Tally(len(names), players), 0, []
    for p in parts(run_dir, ROUNDS_DIR):
        meta = pq.read_metadata(p)
        n_rounds += meta.num_rows
        text = (meta.metadata or {}).get(TALLY_KEY.encode())
        if text is None:
            missing.append(p)
        else:
            tally.merge(Tally.from_json(text))
    if missing:
        for codes, pen, winner in iter_codes(run_dir, names, paths=missing):
            tally.add_rounds(codes, pen, winner)
        match_parts = [Path(run_dir) / MATCHES_DIR / p.name for p in missing]
        match_parts = [p for p in match_parts if p.exists()]
        for codes, total, winners in iter_codes(run_dir, names, MATCHES_DIR, "total_", paths=match_parts):
            tally.add_matches(codes, total, winners)
    return tally, n_rounds


def read_manifest(run_dir) -> dict:
    return json.loads((Path(run_dir) / MANIFEST_FILE).read_text(encoding="utf-8"))


def to_pandas(table: pa.Table) -> pd.DataFrame:
    """An arrow table as pandas with nullable integer columns (a null stays <NA>, never
    turns a column into floats) and agent names as categoricals."""
    import pandas as pd
    import pyarrow as pa
    nullable = {pa.int8(): pd.Int8Dtype(), pa.int16(): pd.Int16Dtype(), pa.int32(): pd.Int32Dtype(),
                pa.int64(): pd.Int64Dtype(), pa.bool_(): pd.BooleanDtype()}
    return table.to_pandas(types_mapper=nullable.get)


def _read_parts(paths, columns=None) -> pd.DataFrame | None:
    import pyarrow as pa
    import pyarrow.parquet as pq
    if not paths:
        return None
    return to_pandas(pa.concat_tables([pq.read_table(p, columns=columns) for p in paths]))


def read_rounds(run_dir, columns=None) -> pd.DataFrame:
    """Every round of a run, in chunk order (agent names as categoricals)."""
    df = _read_parts(parts(run_dir, ROUNDS_DIR), columns)
    if df is None:
        raise FileNotFoundError(f"no round parts in {Path(run_dir) / ROUNDS_DIR}")
    return df


def read_matches(run_dir, columns=None) -> pd.DataFrame | None:
    """Every match of a run (None when the run played single rounds)."""
    import pyarrow.parquet as pq
    f = Path(run_dir) / MATCHES_FILE
    if f.exists():
        return to_pandas(pq.read_table(f, columns=columns))
    return _read_parts(parts(run_dir, MATCHES_DIR), columns)


def read_summary(run_dir) -> pd.DataFrame:
    import pandas as pd
    return pd.read_parquet(Path(run_dir) / SUMMARY_FILE)


def write_summary(df: pd.DataFrame, run_dir) -> Path:
    import pyarrow as pa
    path = Path(run_dir) / SUMMARY_FILE
    write_atomic(pa.Table.from_pandas(df, preserve_index=False), path)
    return path
