"""Files written whole or not at all.

Rule: an output kc-sim writes (a record file, a replay page, an SVG, a report, a figure) is
written under a hidden temporary name in its own folder (``.NAME.PID.tmp``,
:func:`temporary_of`: the one home of that name) and renamed over ``NAME`` only once
complete; on any failure (a disk that fills up during the write, a kill, an exception) the
temporary is removed. So a failed command leaves the previous file, or none, never a
truncated page that a browser would show broken, and no hidden file holding the space a
full disk needs back. ``kc_sim.cli.root`` names such a temporary by its output in the
one-line error (:func:`is_temporary_of`), and a run folder removes those an interrupted run
left (:data:`TEMPORARIES`). A device or a pipe given as the output (``-o /dev/stdout``) is
written in place, and a symbolic link's target is replaced, not the link."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

__all__ = ["TEMPORARIES", "atomic_file", "is_temporary_of", "temporary_of", "write_text_atomic"]

#: a glob for the temporaries of the files in a folder (``.NAME.PID.tmp``)
TEMPORARIES = ".*.tmp"


def temporary_of(path) -> Path:
    """The hidden temporary this process writes ``path`` under: ``.NAME.PID.tmp`` beside it."""
    path = Path(path)
    return path.with_name(f".{path.name}.{os.getpid()}.tmp")


def is_temporary_of(name, out) -> bool:
    """Whether ``name`` is a temporary of the output ``out`` (:func:`temporary_of`, any
    process): a path in the same folder, ``.OUT.<pid>.tmp``."""
    if not isinstance(name, (str, os.PathLike)):
        return False
    p, o = Path(name), Path(out)
    return p.parent == o.parent and p.name.startswith(f".{o.name}.") and p.name.endswith(".tmp")


@contextlib.contextmanager
def atomic_file(path, mode: str = "w"):
    """Open ``path`` for writing (``mode`` "w" for UTF-8 text, "wb" for bytes) under a hidden
    temporary name; rename it into place when the block ends without an error."""
    path = Path(path)
    text = {} if "b" in mode else {"encoding": "utf-8"}
    if path.exists() and not path.is_file():
        # a device or a pipe (/dev/stdout, /dev/full, a FIFO): written in place, never replaced by a file
        with open(path, mode, **text) as f:
            yield f
        return
    if path.is_symlink():                   # the file it points to is replaced, the link kept
        path = path.resolve()
    tmp = temporary_of(path)
    try:
        with open(tmp, mode, **text) as f:
            yield f
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def write_text_atomic(path, text: str) -> Path:
    """Write ``text`` to ``path`` whole or not at all; returns the path."""
    with atomic_file(path) as f:
        f.write(text)
    return Path(path)
