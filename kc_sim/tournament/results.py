"""The run folder on disk: its files, writing parts atomically, reading a run back.

Layout of a run folder (see docs/tournaments.md and docs/formats.md)::

    manifest.json        configuration, versions, chunks and their state
    rounds/part-00000.parquet ...   one part per chunk, one row per round
    matches/part-00000.parquet ...  (matches only) one row per match, per chunk
    matches.parquet      (matches only) every match, in chunk order
    summary.parquet      per-agent figures, head-to-head rows with more than two agents
    records.jsonl        (with --records K) K game records

The columns of the parts are defined in :mod:`kc_sim.tournament.schema`. The parent
writes a part under a hidden temporary name and renames it, so a part is complete or
absent, and records its size and sha256 in the manifest (:func:`digest`); a reader takes
the parts one at a time (:func:`iter_codes`, :func:`run_tally`) or all of them as pandas
(:func:`read_rounds`), and every reader gets them through :func:`parts`, which checks
them against the manifest first (:func:`kc_sim.tournament.run_folder.verified_parts`):
a damaged or foreign part is named in one line, never read.

pyarrow and pandas are imported inside the functions that need them, so that the
tournament can check a run folder and start its workers before paying for them; a run
imports them beside its first chunks (:func:`import_in_background`).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from kc_sim.errors import UserError
from kc_sim.records.atomic import atomic_file
from kc_sim.stats import Tally
from kc_sim.tournament.schema import AGENT, PENALTY, TOTAL, seat_names

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

ROUNDS_DIR = "rounds"
MATCHES_DIR = "matches"
MATCHES_FILE = "matches.parquet"
SUMMARY_FILE = "summary.parquet"
MANIFEST_FILE = "manifest.json"
RECORDS_FILE = "records.jsonl"
TALLY_KEY = "kc_sim.tally"             # round part metadata: the chunk's summary statistics (JSON)
CHUNK_KEY = "kc_sim.chunk"             # part metadata: which run and chunk wrote it (JSON)


def part_name(chunk: int) -> str:
    return f"part-{chunk:05d}.parquet"


# --- writing ---------------------------------------------------------------------

def import_in_background() -> threading.Thread | None:
    """Import what writing a part needs (pyarrow, its parquet module and pandas, which
    pyarrow loads on its first table: about 0.35 s of one core) in a thread, and return it
    (None when they are imported already: in a notebook, a test, a second run).
    Why: the compiled loops release the GIL while they play, so a run that starts this
    before its first chunk plays on while the import runs on the other core, and stores
    its first parts once the thread has ended (:meth:`kc_sim.tournament.run.Run._play`),
    instead of stopping for the import at its first part."""
    def load() -> None:
        try:
            import pandas  # noqa: F401
            import pyarrow.parquet  # noqa: F401
        except ImportError:             # the first store says what is missing, in its own words
            pass

    if {"pandas", "pyarrow.parquet"} <= sys.modules.keys():
        return None
    thread = threading.Thread(target=load, name="kc-sim-import", daemon=True)
    thread.start()
    return thread


def write_atomic(table: pa.Table, path: Path, metadata: dict | None = None) -> Path:
    """Write a parquet file (zstd, with page checksums) under a hidden temporary name, then
    rename it into place, so a part is either complete or absent. ``metadata`` (str -> str,
    None values left out) is added to the file's key-value metadata. Its :func:`digest`
    is computed from the bytes written (and remembered: asking for it reads nothing)."""
    import pyarrow as pa  # lazy: see the module docstring
    import pyarrow.parquet as pq
    path = Path(path)
    extra = {k: v for k, v in (metadata or {}).items() if v is not None}
    if extra:
        table = table.replace_schema_metadata({**(table.schema.metadata or {}), **extra})
    buf = pa.BufferOutputStream()
    pq.write_table(table, buf, compression="zstd", write_page_checksum=True)
    data = buf.getvalue()
    with atomic_file(path, "wb") as f:
        f.write(data)
    _remember(path, {"size": data.size, "sha256": hashlib.sha256(data).hexdigest()})
    return path


# --- content hashes --------------------------------------------------------------
# The manifest records every part's size and sha256 when it is written
# (kc_sim.tournament.run_folder verifies them). A file's digest is remembered in this
# process by its identity (inode, size, modification time), so a part written or checked
# once is not read again for that.

_DIGESTS: dict = {}


def _identity(st: os.stat_result) -> tuple:
    return st.st_ino, st.st_size, st.st_mtime_ns


def _remember(path: Path, d: dict) -> None:
    try:
        _DIGESTS[(str(path), _identity(path.stat()))] = d
    except OSError:
        pass


def digest(path: Path) -> dict:
    """``{"size": bytes, "sha256": hex}`` of a file (read in blocks: memory stays flat)."""
    path = Path(path)
    key = (str(path), _identity(path.stat()))
    d = _DIGESTS.get(key)
    if d is None:
        h = hashlib.sha256()
        size = 0
        with open(path, "rb") as f:
            while block := f.read(1 << 20):
                h.update(block)
                size += len(block)
        d = _DIGESTS[key] = {"size": size, "sha256": h.hexdigest()}
    return d


def write_json_atomic(obj, path: Path) -> None:
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(obj, indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def clean_temporaries(run_dir: Path) -> None:
    """Remove half-written files left by an interrupted run."""
    for p in Path(run_dir).rglob(".*.tmp"):
        p.unlink(missing_ok=True)


def merge_parts(paths, out: Path) -> Path | None:
    """Stream the parts ``paths`` (in chunk order) into one parquet file."""
    import pyarrow.parquet as pq  # lazy: see the module docstring
    if not paths:
        return None
    tmp = out.with_name(f".{out.name}.tmp")
    writer = None
    try:
        for p in paths:
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
    """Part files of a run in chunk order, each checked against the manifest's size and
    sha256 (:func:`kc_sim.tournament.run_folder.verified_parts`)."""
    from kc_sim.tournament.run_folder import verified_parts  # (that module builds on this one)
    return verified_parts(run_dir, which)


def parts_on_disk(run_dir) -> list[Path]:
    """Every part file in a folder (round and match parts), checked or not."""
    run_dir = Path(run_dir)
    return sorted(run_dir.glob(f"{ROUNDS_DIR}/part-*.parquet")) + sorted(run_dir.glob(f"{MATCHES_DIR}/part-*.parquet"))


def chunk_identity(path: Path) -> dict | None:
    """What a part says about itself (its ``kc_sim.chunk`` metadata: ``run``, ``chunk``,
    ``rows``), or None when it says nothing or cannot be read."""
    import pyarrow.parquet as pq  # lazy: see the module docstring
    try:
        meta = pq.read_schema(path).metadata or {}
        value = json.loads(meta[CHUNK_KEY.encode()])
    except Exception:  # noqa: BLE001 - any unreadable part says nothing
        return None
    return value if isinstance(value, dict) else None


def reads_whole(path: Path) -> bool:
    """Does the parquet file read back whole, every page's checksum right?"""
    import pyarrow.parquet as pq  # lazy: see the module docstring
    try:
        pq.read_table(path, page_checksum_verification=True)
    except Exception:  # noqa: BLE001 - any failure to read means damaged
        return False
    return True


def agent_codes(column, index: dict) -> np.ndarray:
    """An ``agent_<s>`` column (dictionary or plain strings) as agent indices from
    ``index`` (name -> index); -1 for null or a name not in ``index``."""
    col = column.combine_chunks()
    if not hasattr(col, "dictionary"):          # a plain string column
        return np.array([index.get(v, -1) if v is not None else -1 for v in col.to_pylist()], np.int64)
    lookup = np.array([index.get(x, -1) for x in col.dictionary.to_pylist()] + [-1], np.int64)
    return lookup[col.indices.fill_null(len(lookup) - 1).to_numpy().astype(np.int64)]


def seats_of(column_names) -> int:
    """The number of seats of a part, from its column names."""
    return sum(1 for f in column_names if f.startswith(AGENT))


def iter_codes(run_dir, names, which: str = ROUNDS_DIR, values: str = PENALTY, paths=None):
    """Per part (every part of ``which``, or the files ``paths``): (agent indices by seat,
    ``values<s>`` by seat with nulls as -1, extra) where extra is the ``winner`` (rounds) or
    ``winners`` (matches) column; reads only those columns, one part at a time."""
    import pyarrow.parquet as pq  # lazy: see the module docstring
    index = {n: i for i, n in enumerate(names)}
    extra = "winner" if which == ROUNDS_DIR else "winners"
    for p in parts(run_dir, which) if paths is None else paths:
        schema = pq.read_schema(p)
        k = seats_of(schema.names)
        cols = seat_names(AGENT, k) + seat_names(values, k) + [extra]
        t = pq.read_table(p, columns=cols)
        codes = np.empty((t.num_rows, k), np.int64)
        vals = np.empty((t.num_rows, k), np.int64)
        for s in range(k):
            codes[:, s] = agent_codes(t.column(f"{AGENT}{s}"), index)
            vals[:, s] = t.column(f"{values}{s}").fill_null(-1).to_numpy()
        yield codes, vals, t.column(extra).fill_null(-1).to_numpy().astype(np.int64)


def run_tally(run_dir, names, players: int, n_deals: int | None = None):
    """``(Tally, rounds)`` of a run: each round part's tally (its per-deal sums) is read from
    its metadata, written by the worker that played the chunk, so no rounds are read; a part
    without one that this kc-sim can read (written by an older kc-sim, or damaged) is tallied
    from its rows. ``n_deals`` (deals per line-up, default the manifest's) sets the batches."""
    import pyarrow.parquet as pq  # lazy: see the module docstring

    checked = parts(run_dir, ROUNDS_DIR)                 # first: a missing manifest is named there
    if n_deals is None:
        n_deals = int((read_manifest(run_dir).get("schedule") or {}).get("groups_per_lineup") or 1)
    tally, n_rounds, missing = Tally.for_deals(len(names), players, n_deals), 0, []
    for p in checked:
        meta = pq.read_metadata(p)
        n_rounds += meta.num_rows
        text = (meta.metadata or {}).get(TALLY_KEY.encode())
        try:
            tally.merge(Tally.from_json(text))
        except (ValueError, TypeError):
            missing.append(p)
    if missing:
        for p, (codes, pen, winner) in zip(missing, iter_codes(run_dir, names, paths=missing)):
            t = pq.read_table(p, columns=["group", "lineup"])
            first = bool(t.num_rows) and int(t.column("lineup")[0].as_py() or 0) == 0
            tally.add_rounds(t.column("group").to_numpy(), codes, pen, winner, count_deals=first)
        match_parts = [Path(run_dir) / MATCHES_DIR / p.name for p in missing]
        match_parts = [p for p in match_parts if p.exists()]
        for p, (codes, total, winners) in zip(match_parts, iter_codes(run_dir, names, MATCHES_DIR, TOTAL,
                                                                      paths=match_parts)):
            t = pq.read_table(p, columns=["group", "lineup"])
            first = bool(t.num_rows) and int(t.column("lineup")[0].as_py() or 0) == 0
            tally.add_matches(t.column("group").to_numpy(), codes, total, winners, count_deals=first)
    return tally, n_rounds


def read_manifest(run_dir) -> dict:
    """The manifest of a run folder; a file that is not a JSON object is a
    :class:`~kc_sim.errors.UserError` saying how to get it back."""
    path = Path(run_dir) / MANIFEST_FILE
    text = path.read_text(encoding="utf-8", errors="replace")
    try:
        manifest = json.loads(text)
    except (ValueError, RecursionError) as e:       # RecursionError: nested deeper than json can parse
        why = "nested too deeply" if isinstance(e, RecursionError) else e
        raise UserError(f"{path} is damaged (not valid JSON: {why}); rerun the command that made the run "
                        "(the same kc-sim tournament ... --out) to rebuild it from the finished parts") from None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("config"), dict) \
            or not isinstance(manifest.get("chunks"), list):
        raise UserError(f"{path} is damaged (not a kc-sim manifest: no config or chunks); rerun the command "
                        "that made the run (the same kc-sim tournament ... --out) to rebuild it from the finished parts")
    return manifest


def to_pandas(table: pa.Table) -> pd.DataFrame:
    """An arrow table as pandas with nullable integer columns (a null stays <NA>, never
    turns a column into floats) and agent names as categoricals."""
    import pandas as pd  # lazy: see the module docstring
    import pyarrow as pa
    nullable = {pa.int8(): pd.Int8Dtype(), pa.int16(): pd.Int16Dtype(), pa.int32(): pd.Int32Dtype(),
                pa.int64(): pd.Int64Dtype(), pa.bool_(): pd.BooleanDtype()}
    return table.to_pandas(types_mapper=nullable.get)


def _read_parts(paths, columns=None) -> pd.DataFrame | None:
    import pyarrow as pa  # lazy: see the module docstring
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
    import pyarrow.parquet as pq  # lazy: see the module docstring
    from kc_sim.tournament.run_folder import verified_file  # (that module builds on this one)
    f = Path(run_dir) / MATCHES_FILE
    if f.exists():
        return to_pandas(pq.read_table(verified_file(run_dir, MATCHES_FILE), columns=columns))
    return _read_parts(parts(run_dir, MATCHES_DIR), columns)


def read_summary(run_dir) -> pd.DataFrame:
    import pandas as pd  # lazy: see the module docstring
    from kc_sim.tournament.run_folder import verified_file  # (that module builds on this one)
    return pd.read_parquet(verified_file(run_dir, SUMMARY_FILE))


def write_summary(df: pd.DataFrame, run_dir) -> Path:
    import pyarrow as pa  # lazy: see the module docstring
    return write_atomic(pa.Table.from_pandas(df, preserve_index=False), Path(run_dir) / SUMMARY_FILE)
