"""Where numba keeps compiled code, keyed by the source of the compiled parts.

numba's on-disk cache notices when a function's own file changes, not when a function it
calls from another file does: an edited core could keep running stale machine code. So
the cache folder gets a sub-folder named after a hash of the package's source files
(``kc_sim`` and the built-in ``agents``); any edit starts a fresh cache. The base folder
is ``NUMBA_CACHE_DIR`` when set, else ``~/.cache/kc-sim/numba``.

When: :mod:`kc_sim.core` sets the folder up as it is imported (:func:`configure`), which
every module of kc-sim that compiles with numba does before its first compiled function
(``tests/test_cache.py::test_every_compiling_module_imports_the_core_first`` checks it), so
the folder is set before numba compiles or loads any of kc-sim's functions, whatever is
imported first; ``import kc_sim`` alone, the command line and the readers of finished runs
neither hash the sources nor touch the environment. The folder is put in
``NUMBA_CACHE_DIR``, so every process started afterwards (workers, the command's own
children) uses it as is, without hashing again: one cache for ``make run``, the tests,
notebooks and workers.
"""

from __future__ import annotations

import functools
import hashlib
import os
import sys
from pathlib import Path

__all__ = ["configure", "source_hash"]

_ROOT = Path(__file__).resolve().parents[1]
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


@functools.cache
def configure() -> str:
    """Point numba's cache at the folder for this source (once per process); returns it.
    Child processes inherit it through the environment, and numba reads it when imported;
    numba is not imported here, only told when already loaded."""
    base = Path(os.environ.get("NUMBA_CACHE_DIR") or Path.home() / ".cache" / "kc-sim" / "numba")
    folder = base if base.name.startswith(_PREFIX) else base / f"{_PREFIX}{source_hash()}"
    os.environ["NUMBA_CACHE_DIR"] = str(folder)
    numba = sys.modules.get("numba")
    if numba is not None:
        numba.config.CACHE_DIR = str(folder)
    return str(folder)
