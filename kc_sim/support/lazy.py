"""Things made on first use, not on import.

* :func:`lazy_exports`: package exports that load their module on first use (PEP 562).
  ``kc_sim.play`` and ``kc_sim.tournament`` offer their main names at the package level
  (``from kc_sim.play import Game``), but importing one submodule of them (a reader's
  ``kc_sim.runs.schema``, a worker's module) must not load every other module and the
  compiled core with it.
* :class:`OnFirstUse`: values made once each, on first use, by name, and kept by the object
  that owns them (a module's ``__getattr__`` reads them): the generic loops and the random
  policy, which numba compiles (seconds from an empty cache) only when a run needs them.
"""

from __future__ import annotations

import importlib
import threading
from typing import Callable

__all__ = ["OnFirstUse", "lazy_exports"]


def lazy_exports(package: str, exports: dict[str, str]):
    """``__getattr__`` and ``__dir__`` for ``package``: each name of ``exports`` (name ->
    module) is imported from its module when first read, then kept in the package."""
    namespace = importlib.import_module(package).__dict__

    def __getattr__(name):
        if name not in exports:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(exports[name]), name)
        namespace[name] = value
        return value

    def __dir__():
        return sorted(set(namespace) | set(exports))

    return __getattr__, __dir__


class OnFirstUse:
    """Values by name, each made by its maker on first use and then kept; thread-safe (a
    value is made once even when two threads ask at the same time; a maker may ask for
    another value of the same object)."""

    def __init__(self, makers: dict[str, Callable[[], object]]):
        self._makers = dict(makers)
        self._made: dict[str, object] = {}
        self._lock = threading.RLock()

    def __contains__(self, name: str) -> bool:
        return name in self._makers

    def made(self, name: str) -> bool:
        """Whether ``name`` has been made in this process."""
        return name in self._made

    def __getitem__(self, name: str):
        try:
            return self._made[name]
        except KeyError:
            pass
        maker = self._makers[name]           # KeyError for a name it does not make
        with self._lock:
            if name not in self._made:
                self._made[name] = maker()
            return self._made[name]
