"""Package exports that load their module on first use (PEP 562).

``kc_sim.play`` and ``kc_sim.tournament`` offer their main names at the package level
(``from kc_sim.play import Game``), but importing one submodule of them (a reader's
``kc_sim.tournament.schema``, a worker's module) must not load every other module and the
compiled core with it."""

from __future__ import annotations

import importlib


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
