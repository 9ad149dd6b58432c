"""Moved to :mod:`kc_sim.runs` (issue 34); kept for the reading functions that notebooks and
docs of earlier versions name from this path: ``read_rounds``, ``read_matches``,
``read_summary``, ``read_manifest`` (the manifest as its JSON object) and ``parts``."""

from kc_sim.runs import RunReader, read_matches, read_rounds, read_summary
from kc_sim.runs.layout import ROUNDS
from kc_sim.runs.manifest import read_manifest_json as read_manifest

__all__ = ["parts", "read_manifest", "read_matches", "read_rounds", "read_summary"]


def parts(run_dir, which: str = ROUNDS):
    """The verified part files of a run, in chunk order (:meth:`kc_sim.runs.RunReader.parts`)."""
    return RunReader(run_dir).parts(which)
