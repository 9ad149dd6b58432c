"""The run folder while a run writes it: its lock, its manifest, verified parts, resume.

**One run at a time** (:class:`~kc_sim.runs.lock.FolderLock`): :meth:`RunFolder.open` takes
the folder's lock and holds it until the run ends, also when it fails.

**The manifest** (:class:`~kc_sim.runs.manifest.Manifest`) stores the run's configuration
and the state of every chunk. Reopening a folder with the same configuration keeps the
chunks done whose parts are intact and plays the rest; a different configuration, or a
folder that is not a run folder, is refused with a :class:`~kc_sim.errors.UserError`
before anything is played.

**Verified parts.** :meth:`RunFolder.store` writes a chunk's parts whole, then records
their size and sha256 in the manifest and marks the chunk done (in that order), so after a
crash every chunk listed done is complete. Every part also names its run and chunk in its
metadata (:data:`~kc_sim.runs.schema.CHUNK_KEY`). On reopening, a part whose size or hash
differs (bytes flipped, truncated, replaced by a copy of another part) is played again, so
the data then equal an uninterrupted run's; readers get parts through
:class:`~kc_sim.runs.reader.RunReader`, which names a damaged, missing or foreign part in
one line instead of reading it. A missing or damaged ``manifest.json`` is rebuilt from the
parts that prove to belong to this run and chunk (they are read whole, their page checksums
checked); if some parts belong to another run, or say nothing (an older kc-sim), the
folder is refused and the parts are kept.
"""

from __future__ import annotations

import json
import shutil
import sys
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from kc_sim.errors import UserError
import kc_sim.runs.layout as layout
from kc_sim.runs.lock import FolderLock, notice, now
from kc_sim.runs.manifest import ChunkEntry, Manifest, RunConfig, ScheduleInfo, StopInfo, read_manifest_json
from kc_sim.runs.parts import Digests, chunk_identity, merge_parquet, reads_whole, write_json, write_parquet
from kc_sim.runs.reader import RunReader, listing
from kc_sim.runs.schema import CHUNK_KEY, TALLY_KEY, matches_table, rounds_table

__all__ = ["ChunkSpec", "RunFolder", "RunSpec"]


@dataclass(frozen=True)
class ChunkSpec:
    """A chunk of a run: groups (deals) ``start`` .. ``stop - 1`` of line-up ``lineup``,
    ``units`` rounds (or matches); ``index`` names its parts. The tournament's schedule cuts a
    run into these (:meth:`kc_sim.tournament.schedule.Schedule.chunks`)."""

    index: int
    lineup: int
    start: int
    stop: int
    units: int

    @property
    def groups(self) -> int:
        return self.stop - self.start


@dataclass(frozen=True)
class RunSpec:
    """What the folder must know of a run to hold it: where, its configuration, its
    schedule and its chunks (the tournament's plan makes one)."""

    path: Path
    config: RunConfig
    schedule: ScheduleInfo
    chunks: tuple[ChunkSpec, ...]


def _versions() -> dict:
    out = {"python": sys.version.split()[0]}
    for pkg in ("kc-sim", "numpy", "numba", "pandas", "pyarrow", "joblib", "dask", "distributed"):
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            pass
    return out


def _describe_difference(old: dict, new: dict) -> str:
    keys = [k for k in new if old.get(k) != new.get(k)]
    return "; ".join(f"{k} {new.get(k)!r} here but {old.get(k)!r} there" for k in keys[:3])


class RunFolder:
    """The folder of one run while it is played (module doc). Open it with :meth:`open`;
    :meth:`close` (or leaving a ``with`` block) releases the lock."""

    def __init__(self, spec: RunSpec, manifest: Manifest | None = None, lock: FolderLock | None = None):
        self.spec = spec
        self.path = Path(spec.path)
        self.config = spec.config
        self.chunks = list(spec.chunks)
        self.manifest = manifest
        self.digests = Digests()
        self._lock = lock
        #: the run and chunk a part belongs to, as written in its metadata (CHUNK_KEY)
        self.run_id = spec.config.run_id()

    # --- opening -------------------------------------------------------------------------

    @staticmethod
    def check(spec: RunSpec) -> Manifest | None:
        """The manifest of the run already in ``spec.path`` (None for a new or empty folder,
        or one whose manifest is missing or damaged: :meth:`open` rebuilds or refuses it).
        Refuses a folder holding a different run, or anything that is not a run folder."""
        out = Path(spec.path)
        if out.exists() and not out.is_dir():
            raise UserError(f"cannot use {out} as the run folder: it is a file")
        if (out / layout.MANIFEST_FILE).exists():
            try:
                old = read_manifest_json(out)
            except UserError:
                return None                       # damaged: rebuilt from its parts, or refused, when opened
            except OSError as e:
                raise UserError(f"cannot read {out / layout.MANIFEST_FILE}: {e.strerror or e}") from None
            config = spec.config.to_dict()
            if old.get("config") != config:
                raise UserError(f"{out} holds a different run ({_describe_difference(old.get('config', {}), config)}); "
                                "rerun that command to resume it, or choose another --out")
            return Manifest.from_dict(old)
        if layout.content(out) and not layout.parts_on_disk(out):
            raise UserError(f"{out} exists and is not a tournament folder (no {layout.MANIFEST_FILE}); "
                            "choose another --out")
        return None

    @classmethod
    def open(cls, spec: RunSpec, command: str | None, *, wait: bool = False) -> RunFolder:
        """Lock the run folder, then create or reopen it and write its manifest: chunks done
        whose parts are intact stay done, every other chunk is pending (a damaged part is
        named on stderr and played again). Refuses a folder of another run (:meth:`check`),
        and a folder another command is using (unless ``wait``)."""
        out = Path(spec.path)
        if not (out / layout.LOCK_FILE).exists():
            cls.check(spec)                 # refuse what is not a run folder before leaving a trace in it
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise UserError(f"cannot write to {out}: {e.strerror or e}") from None
        lock = FolderLock.take(out, command, wait)
        try:
            old = cls.check(spec)           # again, under the lock: another run may have just made it
            folder = cls(spec, None, lock)
            if old is None and ((out / layout.MANIFEST_FILE).exists() or layout.parts_on_disk(out)):
                done = folder._rebuild()
            else:
                done = folder._verify(old)
            folder.manifest = folder._new_manifest(old, done, command)
            (out / layout.ROUNDS).mkdir(parents=True, exist_ok=True)
            if spec.config.mode == "matches":
                (out / layout.MATCHES).mkdir(exist_ok=True)
            layout.clean_temporaries(out)
            shutil.rmtree(out / layout.WATCH_DIR, ignore_errors=True)       # left by a run that was killed
            folder.save()
        except OSError as e:
            lock.release()
            raise UserError(f"cannot write to {out}: {e.strerror or e}") from None
        except BaseException:
            lock.release()
            raise
        return folder

    def _entry(self, c: ChunkSpec, **done) -> ChunkEntry:
        return ChunkEntry(c.index, c.lineup, (c.start, c.stop), self.config.mode, c.units,
                          file=layout.part_rel(layout.ROUNDS, c.index), **done)

    def _new_manifest(self, old: Manifest | None, done: dict[int, ChunkEntry], command: str | None) -> Manifest:
        """The manifest of this run: ``done`` maps the chunks kept to their entries."""
        return Manifest(config=self.config, schedule=self.spec.schedule,
                        chunks=[done.get(c.index) or self._entry(c) for c in self.chunks], command=command,
                        versions=_versions(), created=old.created if old is not None and old.created else now(),
                        updated=now())

    def _part_rels(self, index: int) -> list[str]:
        """The parts of chunk ``index``, relative to the folder."""
        kinds = [layout.ROUNDS] + ([layout.MATCHES] if self.config.mode == "matches" else [])
        return [layout.part_rel(kind, index) for kind in kinds]

    def _verify(self, old: Manifest | None) -> dict[int, ChunkEntry]:
        """The chunks of the old manifest that stay done: listed done, their parts present
        and (when the manifest recorded them) of the recorded size and sha256. The others
        are named on stderr and played again."""
        done, damaged = {}, []
        for entry in old.chunks if old is not None else ():
            i = entry.index
            if not entry.done or not 0 <= i < len(self.chunks):
                continue
            recorded = entry.parts or {}
            bad = [rel for rel in self._part_rels(i)
                   if not (self.path / rel).is_file()
                   or (rel in recorded and self.digests.of(self.path / rel) != recorded[rel])]
            if bad:
                damaged += [rel for rel in bad if (self.path / rel).exists()]
            else:
                done[i] = entry
        if damaged:
            one = len(damaged) == 1
            notice(f"{self.path}: {listing(damaged)} {'is' if one else 'are'} damaged (size or sha256 differs from "
                   f"{layout.MANIFEST_FILE}): playing {'its' if one else 'their'} chunk again")
        return done

    def _rebuild(self) -> dict[int, ChunkEntry]:
        """The chunks kept when ``manifest.json`` is missing or damaged: those whose parts
        say (metadata) they belong to this run and chunk and read back whole. Refuses the
        folder if a readable part belongs to another run or says nothing; a part that does
        not read back whole (its metadata may be what was damaged) is played again."""
        out = self.path
        foreign = [p.relative_to(out).as_posix() for p in layout.parts_on_disk(out)
                   if ((chunk_identity(p) or {}).get("run") != self.run_id) and reads_whole(p)]
        if foreign:
            raise UserError(f"{out / layout.MANIFEST_FILE} is damaged or missing, and {listing(foreign)} "
                            f"{'does' if len(foreign) == 1 else 'do'} not say they belong to this run (another run's, "
                            "or an older kc-sim's), so the manifest cannot be rebuilt; the parts are kept: rerun the "
                            "command that made this run, restore manifest.json, or choose another --out")
        done, bad = {}, []
        for c in self.chunks:
            rels = self._part_rels(c.index)
            if not all((out / rel).is_file() for rel in rels):
                continue
            entries = [chunk_identity(out / rel) for rel in rels]
            if all(e is not None and e.get("chunk") == c.index and reads_whole(out / rel)
                   for e, rel in zip(entries, rels)):
                done[c.index] = self._entry(c, state="done", rows=entries[0].get("rows"),
                                            parts={rel: self.digests.of(out / rel) for rel in rels})
            else:
                bad += rels[:1]
        what = f"; {listing(bad)} damaged, played again" if bad else ""
        notice(f"{out / layout.MANIFEST_FILE} was damaged or missing: rebuilt from the parts ({len(done)} of "
               f"{len(self.chunks)} chunks verified{what})")
        return done

    def close(self) -> None:
        """Release the lock (the end of the run, or its failure)."""
        if self._lock is not None and self._lock.held:
            shutil.rmtree(self.path / layout.WATCH_DIR, ignore_errors=True)
            self._lock.release()

    def __enter__(self) -> RunFolder:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # --- the chunks ----------------------------------------------------------------------

    def done(self, index: int) -> bool:
        return self.manifest.chunks[index].done

    def n_done(self) -> int:
        return sum(self.done(c.index) for c in self.chunks)

    def part_path(self, kind: str, index: int) -> Path:
        return layout.part_path(self.path, kind, index)

    def parts(self, kind: str = layout.ROUNDS) -> list[Path]:
        """The parts of the chunks done (verified when stored or opened), in chunk order."""
        return [self.part_path(kind, c.index) for c in self.chunks
                if self.done(c.index) and self.part_path(kind, c.index).exists()]

    def reader(self) -> RunReader:
        """A reader of this folder, sharing what this object has hashed."""
        return RunReader(self.path, self.digests)

    def store(self, index: int, rounds: dict, matches: dict | None, tally: str | None, seconds: float) -> None:
        """Write chunk ``index``'s parts from its compact columns (``rounds``, and ``matches``
        with matches: :func:`~kc_sim.runs.schema.compact_rounds`) and its ``tally`` (JSON),
        then record their size and sha256 and mark the chunk done in the manifest (in that
        order); ``seconds``: what playing it took."""
        chunk, config, sched = self.chunks[index], self.config, self.spec.schedule
        lineup = sched.lineups[chunk.lineup]
        written = {}
        if matches is not None:
            t = matches_table(matches, chunk.index, chunk.lineup, lineup, sched.seatings, config.labels)
            written[layout.MATCHES] = write_parquet(t, self.part_path(layout.MATCHES, index),
                                                    self._identity(index, t), self.digests)
        t = rounds_table(rounds, chunk.index, chunk.lineup, lineup, sched.seatings, config.labels)
        written[layout.ROUNDS] = write_parquet(t, self.part_path(layout.ROUNDS, index),
                                               {TALLY_KEY: tally, **self._identity(index, t)}, self.digests)
        entry = self.manifest.chunks[index]
        entry.state, entry.rows, entry.seconds = "done", int(t.num_rows), round(seconds, 3)
        entry.parts = {layout.part_rel(kind, index): self.digests.of(path)
                       for kind, path in sorted(written.items(), reverse=True)}
        self.save()

    def _identity(self, index: int, table) -> dict:
        return {CHUNK_KEY: json.dumps({"run": self.run_id, "chunk": index, "rows": table.num_rows})}

    def drop(self, indices, stop: StopInfo) -> None:
        """Remove the parts of chunks ``indices`` (played beyond an early stop), mark them
        ``skipped`` and record the ``stop`` in the manifest."""
        for i in indices:
            for kind in layout.PART_KINDS:
                self.part_path(kind, i).unlink(missing_ok=True)
            entry = self.manifest.chunks[i]
            entry.state, entry.rows, entry.seconds, entry.parts = "skipped", None, None, None
        self.manifest.stop = stop
        self.save()

    def merge_matches(self) -> Path | None:
        """``matches.parquet``: every match part of the chunks done, in chunk order."""
        return merge_parquet(self.parts(layout.MATCHES), self.path / layout.MATCHES_FILE)

    def write_summary(self, df) -> Path:
        """Write ``summary.parquet`` (a pandas table) whole."""
        import pyarrow as pa  # lazy: see kc_sim.runs.parts
        return write_parquet(pa.Table.from_pandas(df, preserve_index=False), self.path / layout.SUMMARY_FILE,
                             digests=self.digests)

    def finished(self, rounds: int, files) -> None:
        """Mark the run finished, with its number of rounds and the size and sha256 of the
        files made from the parts (``files``: paths in the folder)."""
        self.manifest.finished = True
        self.manifest.rounds = rounds
        self.manifest.files = {p.name: self.digests.of(p) for p in files if p is not None}
        self.save()

    def save(self) -> None:
        """Write the manifest whole, with its count of units done and the time."""
        m = self.manifest
        m.units_done = sum(c.units for c in m.chunks if c.done)
        m.updated = now()
        write_json(m.to_dict(), self.path / layout.MANIFEST_FILE)
