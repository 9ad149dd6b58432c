"""Tournaments: the schedule of deals and seatings (``schedule``), the configuration
(``plan``), what a worker plays (``worker``), the backends (``backends``), game records
(``game_records``), early stopping (``stopping``), the run itself (``run``), and its faults:
the stall watchdog (``watch``, ``rederive``), processes that die with their parent
(``lifeline``) and the command's supervisor (``supervise``). The run folder it writes is
:mod:`kc_sim.runs`."""

from kc_sim._lazy import lazy_exports

# lazy: see kc_sim._lazy
_EXPORTS = {
    "FORMAT": "kc_sim.runs.manifest",
    "make_plan": "kc_sim.tournament.plan",
    "run_tournament": "kc_sim.tournament.run",
    "check_run_folder": "kc_sim.tournament.run",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
