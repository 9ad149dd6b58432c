"""Moved to :mod:`kc_sim.runs` (issue 34); kept for the reading functions that notebooks and
docs of earlier versions name from this path: ``read_rounds``, ``read_matches``,
``read_summary``, ``read_manifest`` (the manifest as its JSON object) and ``parts``."""

from kc_sim.runs import RunReader, read_matches, read_rounds, read_summary
from kc_sim.runs.layout import MANIFEST_FILE, MATCHES_FILE, RECORDS_FILE, SUMMARY_FILE, part_name
from kc_sim.runs.layout import MATCHES as MATCHES_DIR
from kc_sim.runs.layout import ROUNDS as ROUNDS_DIR
from kc_sim.runs.manifest import read_manifest_json as read_manifest

__all__ = ["MANIFEST_FILE", "MATCHES_DIR", "MATCHES_FILE", "RECORDS_FILE", "ROUNDS_DIR", "SUMMARY_FILE", "part_name",
           "parts", "read_manifest", "read_matches", "read_rounds", "read_summary"]


def parts(run_dir, which: str = ROUNDS_DIR):
    """The verified part files of a run, in chunk order (:meth:`kc_sim.runs.RunReader.parts`)."""
    return RunReader(run_dir).parts(which)
