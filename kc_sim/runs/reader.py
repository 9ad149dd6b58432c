"""Reading a run folder back: every part checked against the manifest before it is read.

:class:`RunReader` is how everything that reads a finished (or partly finished) run gets at
it: the report, plots, leaderboard, power, control variates, experiments, the stopping
rule of a resumed run, the game records of a run, ``kc-sim power``. It offers the typed
manifest (:attr:`RunReader.manifest`), the verified part files (:meth:`RunReader.parts`,
:meth:`RunReader.file`), the parts as tables or as int64 arrays one at a time
(:meth:`RunReader.tables`, :meth:`RunReader.codes`), the run's tally from the parts'
metadata (:meth:`RunReader.tally`) and the whole run as pandas (:meth:`RunReader.rounds`,
:meth:`RunReader.matches`, :meth:`RunReader.summary`).

**Verified reads.** A part is read only once its size and sha256 match what the manifest
recorded when it was written: a part damaged or missing, or one a finished run does not
list (foreign), is a :class:`~kc_sim.errors.UserError` naming it and saying which command
plays it again. Parts of a run written before kc-sim recorded digests, and a folder of
parts made by hand (no manifest, no part naming its run), are taken as they are. The
digests a reader computes are remembered by the reader (:class:`~kc_sim.runs.parts.Digests`),
so a part is hashed once per reader however often it is read.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from kc_sim.errors import UserError
import kc_sim.runs.layout as layout
from kc_sim.runs.manifest import Manifest, read_manifest
from kc_sim.runs.parts import Digests, chunk_identity, to_pandas
from kc_sim.runs.schema import AGENT, PENALTY, TALLY_KEY, TOTAL, seat_arrays, seat_names, seats_of
from kc_sim.stats import Tally

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["RunReader", "listing", "read_matches", "read_rounds", "read_summary"]


def listing(rels: list[str], at_most: int = 3) -> str:
    """``a, b, c and 2 more``: file names in a one-line message."""
    shown = ", ".join(rels[:at_most])
    return shown + (f" and {len(rels) - at_most} more" if len(rels) > at_most else "")


def _rerun(command, run_dir: Path) -> str:
    """The advice to rerun the run's command, with ``--out`` naming the folder read: a run
    folder copied or moved elsewhere is resumed where it is now, not where it was made."""
    if not command:
        return "rerun the run's tournament command"
    try:
        words = shlex.split(command)
        at = words.index("--out") + 1
        if at < len(words) and Path(words[at]).resolve() != Path(run_dir).resolve():
            words[at] = str(Path(run_dir).resolve())
            command = shlex.join(words)
    except ValueError:                  # not a command kc-sim wrote: shown as it is
        pass
    return f"rerun the run's command ({command})"


def _is(n: int) -> str:
    return "is" if n == 1 else "are"


class RunReader:
    """A run folder opened for reading (module doc). Cheap to make: nothing is read until asked."""

    def __init__(self, run_dir, digests: Digests | None = None):
        self.path = Path(run_dir)
        self.digests = digests if digests is not None else Digests()
        self._manifest: Manifest | None = None
        self._parts: dict[str, list[Path]] = {}

    @classmethod
    def open(cls, run_dir) -> RunReader:
        """A reader of the run folder ``run_dir`` whose manifest is read: the one answer to
        "is this a run folder?" of the commands that read a finished run; a UserError saying
        what is wrong (no such folder, no manifest, a manifest that cannot be read)."""
        path = Path(run_dir)
        if not path.is_dir():
            raise UserError(f"run folder {path} does not exist (make one with kc-sim tournament --out {path})")
        reader = cls(path)
        if not reader.has_manifest:
            raise UserError(f"{path} is not a run folder: it has no {layout.MANIFEST_FILE} "
                            "(make one with kc-sim tournament --out DIR)")
        try:
            reader.manifest
        except OSError as e:
            raise UserError(f"cannot read {path / layout.MANIFEST_FILE}: {e}") from None
        return reader

    # --- the manifest --------------------------------------------------------------------

    @property
    def has_manifest(self) -> bool:
        return (self.path / layout.MANIFEST_FILE).exists()

    @property
    def manifest(self) -> Manifest:
        """The typed manifest (read once); a missing or damaged one is a UserError."""
        if self._manifest is None:
            self._manifest = read_manifest(self.path)
        return self._manifest

    @property
    def labels(self) -> list[str]:
        return list(self.manifest.config.labels)

    @property
    def players(self) -> int:
        return self.manifest.config.players

    def n_deals(self) -> int:
        """Deals per line-up: the schedule's, else the largest deal number + 1 (from the
        parts' statistics, or their ``group`` column)."""
        n = self.manifest.groups_per_lineup if self.has_manifest else None
        if n:
            return n
        import pyarrow.parquet as pq  # lazy: pyarrow is slow to import
        top = -1
        for p in self.parts():
            meta = pq.read_metadata(p)
            j = meta.schema.to_arrow_schema().get_field_index("group")
            stats = [meta.row_group(i).column(j).statistics for i in range(meta.num_row_groups)]
            if all(s is not None and s.has_min_max for s in stats):
                top = max([top] + [int(s.max) for s in stats])
            else:
                t = pq.read_table(p, columns=["group"])
                if t.num_rows:
                    top = max(top, int(t.column("group").fill_null(-1).to_numpy().max()))
        return top + 1

    # --- verified files ------------------------------------------------------------------

    def parts(self, kind: str = layout.ROUNDS) -> list[Path]:
        """The parts of ``kind`` of the chunks done, in chunk order, each checked against
        the size and sha256 the manifest recorded (module doc)."""
        if kind not in self._parts:
            self._parts[kind] = self._verified_parts(kind)
        return list(self._parts[kind])

    def _verified_parts(self, kind: str) -> list[Path]:
        run_dir = self.path
        on_disk = layout.parts_on_disk(run_dir, kind)
        if not self.has_manifest:
            # parts made by hand are read as they are; a kc-sim run's parts need their manifest
            if any(chunk_identity(p) is not None for p in on_disk):
                raise UserError(f"{run_dir} has no {layout.MANIFEST_FILE}, so its parts cannot be checked; rerun the "
                                "command that made the run to rebuild it from its parts")
            return on_disk
        man = self.manifest
        command = man.command
        expected = self._expected(man, kind)
        present = {f"{kind}/{p.name}": p for p in on_disk}
        missing = sorted(set(expected) - set(present))
        if missing:
            raise UserError(f"{run_dir}: {listing(missing)} {_is(len(missing))} missing; {_rerun(command, run_dir)} to "
                            f"play {'its' if len(missing) == 1 else 'their'} chunk again")
        extra = sorted(set(present) - set(expected))
        if extra and man.finished:
            them = "it" if len(extra) == 1 else "them"
            raise UserError(f"{run_dir}: {listing(extra)} {_is(len(extra))} not part of this run "
                            f"({layout.MANIFEST_FILE} does not list {them}); remove {them}, or {_rerun(command, run_dir)}")
        out = []
        for rel, p in sorted(present.items()):
            if rel not in expected:
                continue                            # a chunk still being played
            want = expected[rel]
            if want is not None and self.digests.of(p) != want:
                raise UserError(f"{run_dir}: {rel} is damaged (its size or sha256 is not what {layout.MANIFEST_FILE} "
                                f"recorded when it was written); {_rerun(command, run_dir)} to play that chunk again")
            out.append(p)
        return out

    def _expected(self, man: Manifest, kind: str) -> dict[str, dict | None]:
        """The parts of the chunks done -> their recorded digest (None: not recorded)."""
        expected: dict[str, dict | None] = {}
        for c in man.done_chunks():
            rel = layout.part_rel(kind, c.index)
            if c.parts is not None:
                if rel in c.parts:
                    expected[rel] = c.parts[rel]
            elif (self.path / rel).exists():       # an older run: no digests recorded
                expected[rel] = None
        return expected

    def file(self, name: str) -> Path:
        """A file made from the run's parts (``summary.parquet``, ``matches.parquet``),
        checked against the size and sha256 in the manifest when it recorded them."""
        path = self.path / name
        if self.has_manifest:
            man = self.manifest
            want = (man.files or {}).get(name)
            if want is not None and path.exists() and self.digests.of(path) != want:
                raise UserError(f"{self.path}: {name} is damaged (its size or sha256 is not what "
                                f"{layout.MANIFEST_FILE} recorded); {_rerun(man.command, self.path)} to write "
                                "it again")
        return path

    # --- reading -------------------------------------------------------------------------

    def part(self, kind: str, index: int) -> Path:
        """Chunk ``index``'s verified part of ``kind``; a UserError when the chunk is not done."""
        path = layout.part_path(self.path, kind, index)
        if path not in self.parts(kind):
            raise UserError(f"{self.path}: {layout.part_rel(kind, index)} is not a finished part of this run")
        return path

    def table(self, kind: str, index: int, columns=None):
        """Chunk ``index``'s verified part of ``kind`` as an arrow table of ``columns``."""
        import pyarrow.parquet as pq  # lazy: pyarrow is slow to import
        return pq.read_table(self.part(kind, index), columns=columns)

    def tables(self, kind: str = layout.ROUNDS, columns=None, paths=None):
        """Each verified part of ``kind`` (or the files ``paths``) as an arrow table of
        ``columns`` (all when None), one at a time."""
        import pyarrow.parquet as pq  # lazy: pyarrow is slow to import
        for p in self.parts(kind) if paths is None else paths:
            yield pq.read_table(p, columns=columns)

    def codes(self, kind: str = layout.ROUNDS, values: str = PENALTY, paths=None, names=None):
        """Per part (every verified part of ``kind``, or the files ``paths``): (agent indices
        by seat, ``values<s>`` by seat with nulls as -1, extra) where extra is the ``winner``
        (rounds) or ``winners`` (matches) column; reads only those columns, one part at a
        time. Agents are indexed by ``names`` (default: the run's labels)."""
        import pyarrow.parquet as pq  # lazy: pyarrow is slow to import
        index = {n: i for i, n in enumerate(self.labels if names is None else names)}
        extra = "winner" if kind == layout.ROUNDS else "winners"
        for p in self.parts(kind) if paths is None else paths:
            k = seats_of(pq.read_schema(p).names)
            t = pq.read_table(p, columns=seat_names(AGENT, k) + seat_names(values, k) + [extra])
            codes, vals = seat_arrays(t, k, values, index)
            yield codes, vals, t.column(extra).fill_null(-1).to_numpy().astype(np.int64)

    def tally(self, names=None, players: int | None = None, n_deals: int | None = None) -> tuple[Tally, int]:
        """``(Tally, rounds)`` of the run: each round part's tally (its per-deal sums) is read
        from its metadata, written by the worker that played the chunk, so no rounds are read;
        a part without one that this kc-sim can read (an older kc-sim's, or damaged) is
        tallied from its rows. ``n_deals`` (deals per line-up, default the manifest's) sets
        the batches."""
        import pyarrow.parquet as pq  # lazy: pyarrow is slow to import
        checked = self.parts(layout.ROUNDS)          # first: a missing manifest is named there
        names = self.labels if names is None else list(names)
        players = self.players if players is None else players
        if n_deals is None:
            n_deals = self.manifest.groups_per_lineup or 1
        tally, n_rounds, missing = Tally.for_deals(len(names), players, n_deals), 0, []
        for p in checked:
            meta = pq.read_metadata(p)
            n_rounds += meta.num_rows
            try:
                tally.merge(Tally.from_json((meta.metadata or {}).get(TALLY_KEY.encode())))
            except (ValueError, TypeError):
                missing.append(p)
        if missing:
            self._tally_rows(tally, missing, names)
        return tally, n_rounds

    def _tally_rows(self, tally: Tally, missing: list[Path], names) -> None:
        """Add to ``tally`` the rows of the round parts ``missing`` (and of their match parts)."""
        import pyarrow.parquet as pq  # lazy: pyarrow is slow to import
        for p, (codes, pen, winner) in zip(missing, self.codes(paths=missing, names=names)):
            t = pq.read_table(p, columns=["group", "lineup", "first"])
            first = bool(t.num_rows) and int(t.column("lineup")[0].as_py() or 0) == 0
            tally.add_rounds(t.column("group").to_numpy(), codes, pen, winner,
                             t.column("first").to_numpy().astype(np.int64), count_deals=first)
        match_parts = [p for p in (self.path / layout.MATCHES / p.name for p in missing) if p.exists()]
        for p, (codes, total, winners) in zip(match_parts, self.codes(layout.MATCHES, TOTAL, match_parts, names)):
            t = pq.read_table(p, columns=["group", "lineup"])
            first = bool(t.num_rows) and int(t.column("lineup")[0].as_py() or 0) == 0
            tally.add_matches(t.column("group").to_numpy(), codes, total, winners, count_deals=first)

    def _frame(self, paths, columns=None) -> pd.DataFrame | None:
        import pyarrow as pa  # lazy: pyarrow is slow to import
        import pyarrow.parquet as pq
        if not paths:
            return None
        return to_pandas(pa.concat_tables([pq.read_table(p, columns=columns) for p in paths]))

    def rounds(self, columns=None) -> pd.DataFrame:
        """Every round of the run, in chunk order (agent names as categoricals)."""
        df = self._frame(self.parts(layout.ROUNDS), columns)
        if df is None:
            raise FileNotFoundError(f"no round parts in {self.path / layout.ROUNDS}")
        return df

    def matches(self, columns=None) -> pd.DataFrame | None:
        """Every match of the run (None when it played single rounds)."""
        import pyarrow.parquet as pq  # lazy: pyarrow is slow to import
        if (self.path / layout.MATCHES_FILE).exists():
            return to_pandas(pq.read_table(self.file(layout.MATCHES_FILE), columns=columns))
        return self._frame(self.parts(layout.MATCHES), columns)

    def summary(self) -> pd.DataFrame:
        """``summary.parquet`` (verified)."""
        import pandas as pd  # lazy: pandas is slow to import
        return pd.read_parquet(self.file(layout.SUMMARY_FILE))


def read_rounds(run_dir, columns=None) -> pd.DataFrame:
    """Every round of a run, in chunk order (agent names as categoricals)."""
    return RunReader(run_dir).rounds(columns)


def read_matches(run_dir, columns=None) -> pd.DataFrame | None:
    """Every match of a run (None when the run played single rounds)."""
    return RunReader(run_dir).matches(columns)


def read_summary(run_dir) -> pd.DataFrame:
    """A run's ``summary.parquet`` (verified)."""
    return RunReader(run_dir).summary()
