"""Tournaments: what is asked, checked once (``options``), the schedule of deals and seatings
(``schedule``), the configuration (``plan``), sizes (``sizes``), what a worker plays
(``worker``) and starting workers early (``early``), storing each chunk in a writer thread
(``storing``), game records (``game_records``), early stopping (``stopping``), the run itself
(``run``), and the stalled round of a stuck process found again (``rederive``). The run
folder it writes is :mod:`kc_sim.runs`; the processes a run plays in, and their watchdog
and supervisor, are :mod:`kc_sim.processes`."""

from kc_sim.support.lazy import lazy_exports

# lazy: see kc_sim.support.lazy
_EXPORTS = {
    "make_plan": "kc_sim.tournament.plan",
    "run_tournament": "kc_sim.tournament.run",
    "check_run_folder": "kc_sim.tournament.run",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
