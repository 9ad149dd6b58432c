"""Imports that must stay light: the layers let a module load only what it needs, and these
paths are the ones where it shows (a fresh interpreter each, so nothing is loaded already)."""

import subprocess
import sys

import pytest

CASES = [
    # reading a finished run never loads the compiled core (its cache load costs ~100 MB)
    ("kc_sim.analysis.plots", "kc_sim.core.loop"),
    ("kc_sim.analysis.report", "kc_sim.core.loop"),
    ("kc_sim.analysis.scan", "kc_sim.core.loop"),
    ("kc_sim.runs.schema", "kc_sim.core.loop"),
    # the run folder layer reads manifests and checks parts without numba, pandas or pyarrow
    ("kc_sim.runs", "numba"),
    ("kc_sim.runs", "pandas"),
    ("kc_sim.runs", "pyarrow"),
    # what a worker process imports does not bring in pandas or the dask client
    ("kc_sim.tournament.worker", "pandas"),
    ("kc_sim.tournament.worker", "distributed"),
    # kc-sim --help loads neither the core nor pandas, nor even numba: kc-sim tournament
    # starts its workers before loading numba (kc_sim.tournament.early, kc_sim.processes.pool)
    ("kc_sim.cli", "kc_sim.core.loop"),
    ("kc_sim.cli", "pandas"),
    ("kc_sim.cli", "numba"),
    ("kc_sim.processes.pool", "numba"),
    ("kc_sim.tournament.early", "numba"),
    ("kc_sim.processes.supervise", "numba"),
]


@pytest.mark.parametrize("module,absent", CASES, ids=[f"{m}-without-{a}" for m, a in CASES])
def test_module_does_not_load(module, absent):
    code = f"import sys, {module}; print({absent!r} in sys.modules)"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "False", f"importing {module} loads {absent}"
