"""Where numba keeps compiled code, keyed by the source of the compiled parts.

numba's on-disk cache notices when a function's own file changes, not when a function it
calls from another file does: an edited core could keep running stale machine code. So
the cache folder gets a sub-folder named after a hash of the package's source files
(``kc_sim`` and the built-in ``agents``); any edit starts a fresh cache. The base folder
is ``NUMBA_CACHE_DIR`` when set, else ``~/.cache/kc-sim/numba``.
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

_ROOT = Path(__file__).resolve().parent
_SOURCE_DIRS = (_ROOT, _ROOT.parent / "agents")
_PREFIX = "kc-sim-"


def source_hash() -> str:
    """Short hash of the package's source files."""
    h = hashlib.sha256()
    for d in _SOURCE_DIRS:
        for f in sorted(d.rglob("*.py")) if d.is_dir() else ():
            h.update(f.name.encode())
            h.update(f.read_bytes())
    return h.hexdigest()[:12]


def configure() -> str:
    """Point numba's cache at the folder for this source; returns it. Child processes
    inherit it through the environment, and numba reads it when imported; numba is not
    imported here (the command line starts without it), only told when already loaded."""
    base = Path(os.environ.get("NUMBA_CACHE_DIR") or Path.home() / ".cache" / "kc-sim" / "numba")
    folder = base if base.name.startswith(_PREFIX) else base / f"{_PREFIX}{source_hash()}"
    os.environ["NUMBA_CACHE_DIR"] = str(folder)
    numba = sys.modules.get("numba")
    if numba is not None:
        numba.config.CACHE_DIR = str(folder)
    return str(folder)
