"""A run's parquet files: written whole, known by their digest, read back as pandas.

* **Written whole** (:func:`write_parquet`): the file's bytes are made in memory (zstd,
  with page checksums) and written under a hidden temporary name, then renamed into place
  (:func:`kc_sim.support.atomic.atomic_file`), so a part is complete or absent.
* **Digests** (:class:`Digests`): the size and sha256 of a file, which the manifest
  records for every part and file made from the parts, and which every reader checks
  before it reads (:mod:`kc_sim.runs.reader`). A :class:`Digests` belongs to one folder or
  reader object and remembers what it hashed by the file's identity (path, inode, size,
  modification time), so a part written or checked once is not read again for it; it
  holds at most one entry per file of its run.
* **What a part says about itself** (:func:`chunk_identity`) and whether it reads back
  whole (:func:`reads_whole`): what a damaged or missing manifest is rebuilt from.

pyarrow and pandas are imported inside the functions that need them, so a run can check
its folder and start its workers before paying for them; a run imports them beside its
first chunks (:func:`import_part_libraries`, in its writer thread).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING

from kc_sim.support.atomic import atomic_file
from kc_sim.support.digest import file_digest
from kc_sim.runs.schema import CHUNK_KEY

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

__all__ = ["Digests", "chunk_identity", "file_digest", "import_part_libraries", "merge_parquet", "reads_whole",
           "to_pandas", "write_json", "write_parquet"]


def _identity(path: Path) -> tuple:
    st = path.stat()
    return str(path), st.st_ino, st.st_size, st.st_mtime_ns


class Digests:
    """The digests of the files of one run folder, remembered by file identity (module doc)."""

    def __init__(self):
        self._known: dict[tuple, dict] = {}

    def of(self, path) -> dict:
        """``{"size", "sha256"}`` of ``path``, hashed unless this file (same identity) was
        written or hashed by this object before."""
        path = Path(path)
        key = _identity(path)
        d = self._known.get(key)
        if d is None:
            d = self._known[key] = file_digest(path)
        return d

    def remember(self, path, digest: dict) -> None:
        """The digest of a file just written from bytes this process holds."""
        try:
            self._known[_identity(Path(path))] = digest
        except OSError:
            pass


def write_parquet(table: pa.Table, path, metadata: dict | None = None, digests: Digests | None = None) -> Path:
    """Write a parquet file whole (zstd, page checksums; module doc), adding ``metadata``
    (str -> str, None values left out) to its key-value metadata; returns its path. Its
    digest, computed from the bytes written, is remembered by ``digests`` when given."""
    import pyarrow as pa  # lazy: see the module docstring
    import pyarrow.parquet as pq
    extra = {k: v for k, v in (metadata or {}).items() if v is not None}
    if extra:
        table = table.replace_schema_metadata({**(table.schema.metadata or {}), **extra})
    buf = pa.BufferOutputStream()
    pq.write_table(table, buf, compression="zstd", write_page_checksum=True)
    data = buf.getvalue()
    with atomic_file(path, "wb") as f:
        f.write(data)
    if digests is not None:
        digests.remember(path, {"size": data.size, "sha256": hashlib.sha256(data).hexdigest()})
    return Path(path)


def write_json(obj, path) -> None:
    """Write a JSON file whole (one-space indent, a final newline)."""
    with atomic_file(path) as f:
        f.write(json.dumps(obj, indent=1) + "\n")


def merge_parquet(paths, out) -> Path | None:
    """Stream the parquet files ``paths`` (in order) into one file written whole; None
    when there is nothing to merge."""
    import pyarrow.parquet as pq  # lazy: see the module docstring
    if not paths:
        return None
    with atomic_file(out, "wb") as f:
        writer = None
        try:
            for p in paths:
                t = pq.read_table(p)
                if writer is None:
                    writer = pq.ParquetWriter(f, t.schema, compression="zstd")
                writer.write_table(t)
        finally:
            if writer is not None:
                writer.close()
    return Path(out)


def chunk_identity(path) -> dict | None:
    """What a part says about itself (its :data:`~kc_sim.runs.schema.CHUNK_KEY` metadata:
    ``run``, ``chunk``, ``rows``), or None when it says nothing or cannot be read."""
    import pyarrow.parquet as pq  # lazy: see the module docstring
    try:
        meta = pq.read_schema(path).metadata or {}
        value = json.loads(meta[CHUNK_KEY.encode()])
    except Exception:  # noqa: BLE001 - any unreadable part says nothing
        return None
    return value if isinstance(value, dict) else None


def reads_whole(path) -> bool:
    """Does the parquet file read back whole, every page's checksum right?"""
    import pyarrow.parquet as pq  # lazy: see the module docstring
    try:
        pq.read_table(path, page_checksum_verification=True)
    except Exception:  # noqa: BLE001 - any failure to read means damaged
        return False
    return True


def to_pandas(table: pa.Table) -> pd.DataFrame:
    """An arrow table as pandas with nullable integer columns (a null stays <NA>, never
    turns a column into floats) and agent names as categoricals."""
    import pandas as pd  # lazy: see the module docstring
    import pyarrow as pa
    nullable = {pa.int8(): pd.Int8Dtype(), pa.int16(): pd.Int16Dtype(), pa.int32(): pd.Int32Dtype(),
                pa.int64(): pd.Int64Dtype(), pa.bool_(): pd.BooleanDtype()}
    return table.to_pandas(types_mapper=nullable.get)


def import_part_libraries() -> None:
    """Import what writing a part needs (pyarrow, its parquet module and pandas, which
    pyarrow loads on its first table: about 0.35 s of one core). A run calls this in its
    writer thread before the first store (:mod:`kc_sim.tournament.storing`): the compiled
    loops release the GIL while they play, so the first chunks play on while the import
    runs on the other core. A missing library is left for the first store to name, in its
    own words."""
    try:
        import pandas  # noqa: F401
        import pyarrow.parquet  # noqa: F401
    except ImportError:
        pass
