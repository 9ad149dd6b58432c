"""One compile cache: the `kc-sim` command, worker processes and library use (notebooks,
scripts) all load numba's compiled code from the same folder, so once one of them has
compiled, no other entry point compiles again.

numba reports every cache save and load with NUMBA_DEBUG_CACHE=1; a second entry point
must only load."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import kc_sim

KC_SIM = str(Path(sys.executable).parent / "kc-sim")


def _env() -> dict:
    """The environment a person has: no NUMBA_CACHE_DIR (kc-sim picks its default)."""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["NUMBA_DEBUG_CACHE"] = "1"
    return env


def _run(args, cwd) -> str:
    p = subprocess.run(args, cwd=cwd, env=_env(), capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    return p.stdout + p.stderr


def test_every_entry_point_shares_one_compile_cache(tmp_path):
    folder = subprocess.run([sys.executable, "-c", "import kc_sim; print(kc_sim.CACHE_DIR)"], env=_env(),
                            capture_output=True, text=True, check=True).stdout.strip()
    assert folder == kc_sim.CACHE_DIR            # the same folder with or without NUMBA_CACHE_DIR set
    # the command first (it compiles whatever is not cached yet) ...
    _run([KC_SIM, "tournament", "--agents", "greedy,merger", "--rounds", "2000", "--jobs", "1", "-q",
          "--out", "a"], tmp_path)
    # ... then the library, as a notebook uses it, and the command again with worker processes
    library = _run([sys.executable, "-c", "from kc_sim.tournament.run import run_tournament; "
                    "run_tournament(['greedy', 'merger'], rounds=2000, jobs=1, quiet=True, out='b')"], tmp_path)
    workers = _run([KC_SIM, "tournament", "--agents", "greedy,merger", "--rounds", "4000", "--chunk-size",
                    "1000", "--jobs", "2", "-q", "--out", "c"], tmp_path)
    for text in (library, workers):
        assert "[cache] data loaded" in text
        assert "[cache] data saved" not in text and "[cache] index saved" not in text
