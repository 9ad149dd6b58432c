"""Tournaments: the schedule of deals and seatings (``schedule``), the configuration
(``plan``), the column schema of the parquet parts (``schema``), what a worker plays
(``worker``), the backends (``backends``), the run folder and resuming (``run_folder``,
``results``), game records (``game_records``) and the run itself (``run``)."""

from kc_sim.tournament.plan import FORMAT, make_plan
from kc_sim.tournament.run import run_tournament
from kc_sim.tournament.run_folder import check_run_folder

__all__ = ["FORMAT", "check_run_folder", "make_plan", "run_tournament"]
