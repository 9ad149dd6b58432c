"""The names of a run folder: every file and folder a run writes, and where a chunk's parts go.

One home for the layout (docs/formats.md, The run folder)::

    manifest.json                  configuration, versions, chunks and their state
    rounds/part-00000.parquet ...  one part per chunk, one row per round
    matches/part-00000.parquet ... (matches only) one row per match, per chunk
    matches.parquet                (matches only) every match, in chunk order
    summary.parquet                per-agent figures, head-to-head rows
    records.jsonl                  (with --records K) K game records
    faults/                        the record of a round in which an agent misbehaved
    .lock                          the lock of the command using the folder, and who holds it
    .watch/                        while a run plays: what each playing process is doing

Nothing outside :mod:`kc_sim.runs` builds one of these paths by hand: it asks
:func:`part_path` (or :func:`part_rel`) for a chunk's part and uses the names below.
Imports nothing heavy: the command line and the workers read it.
"""

from __future__ import annotations

from pathlib import Path

from kc_sim.support.atomic import TEMPORARIES

MANIFEST_FILE = "manifest.json"
ROUNDS = "rounds"                 # folder of round parts (also the kind of a part)
MATCHES = "matches"               # folder of match parts
PART_KINDS = (ROUNDS, MATCHES)
MATCHES_FILE = "matches.parquet"
SUMMARY_FILE = "summary.parquet"
RECORDS_FILE = "records.jsonl"
FAULTS_DIR = "faults"
LOCK_FILE = ".lock"
WATCH_DIR = ".watch"
#: the folder's own housekeeping: not content (a folder holding only these is empty)
HOUSEKEEPING = (LOCK_FILE, WATCH_DIR)


def part_name(chunk: int) -> str:
    """The file name of chunk ``chunk``'s parts: ``part-00042.parquet``."""
    return f"part-{chunk:05d}.parquet"


def part_rel(kind: str, chunk: int) -> str:
    """A chunk's part relative to the run folder, as the manifest lists it: ``rounds/part-00042.parquet``."""
    return f"{kind}/{part_name(chunk)}"


def part_path(run_dir, kind: str, chunk: int) -> Path:
    """The path of chunk ``chunk``'s part of ``kind`` (:data:`ROUNDS` or :data:`MATCHES`)."""
    return Path(run_dir) / kind / part_name(chunk)


def parts_on_disk(run_dir, kind: str | None = None) -> list[Path]:
    """Every part file in a folder (of ``kind``, or round parts then match parts), checked or not."""
    run_dir = Path(run_dir)
    return [p for k in ((kind,) if kind else PART_KINDS) for p in sorted(run_dir.glob(f"{k}/part-*.parquet"))]


def clean_temporaries(run_dir) -> None:
    """Remove the half-written files an interrupted run left."""
    for p in Path(run_dir).rglob(TEMPORARIES):
        p.unlink(missing_ok=True)


def content(run_dir) -> list[Path]:
    """What a folder holds besides its housekeeping (:data:`HOUSEKEEPING`)."""
    out = Path(run_dir)
    return [p for p in out.iterdir() if p.name not in HOUSEKEEPING] if out.is_dir() else []
