"""Files written whole or not at all.

Rule: an output kc-sim writes (a record file, a replay page, an SVG, a report, a figure) is
written under a hidden temporary name in its own folder (``.NAME.PID.tmp``) and renamed over
``NAME`` only once complete; on any failure (a disk that fills up during the write, a kill,
an exception) the temporary is removed. So a failed command leaves the previous file, or
none, never a truncated page that a browser would show broken, and no hidden file holding
the space a full disk needs back. ``kc_sim.cli.root`` names such a temporary by its output
in the one-line error. A device or a pipe given as the output (``-o /dev/stdout``) is
written in place, and a symbolic link's target is replaced, not the link."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path


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
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
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
