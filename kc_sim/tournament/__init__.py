"""Tournaments: the schedule of deals and seatings (``schedule``), the configuration
(``plan``), the column schema of the parquet parts (``schema``), what a worker plays
(``worker``), the backends (``backends``), the run folder and resuming (``run_folder``,
``results``), game records (``game_records``) and the run itself (``run``)."""

import importlib

# lazy (PEP 562): the names below load their modules on first use, so importing one
# submodule (``kc_sim.tournament.schema`` from a reader, a worker's module) does not load the
# compiled core and every other module of the package.
_EXPORTS = {
    "FORMAT": "kc_sim.tournament.plan",
    "make_plan": "kc_sim.tournament.plan",
    "run_tournament": "kc_sim.tournament.run",
    "check_run_folder": "kc_sim.tournament.run_folder",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name):
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_EXPORTS[name]), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_EXPORTS))
