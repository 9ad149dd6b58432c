"""Shared test set-up: the opt-in marker for long sweeps, the modules run first, the compiled
agents compiled once before the xdist workers collect, and a state folder of the test run's
own (the SHA-256s of the models kc-sim train writes, kc_sim.net.model_file), so tests neither
read nor add to the user's."""

import os
import subprocess
import sys
import tempfile

import pytest

os.environ.setdefault("KC_SIM_STATE_DIR", tempfile.mkdtemp(prefix="kc-sim-test-state-"))


#: the agent modules numba compiles on import (about a minute in all from an empty cache), in two
#: groups that share little. Each xdist worker imports them while collecting: both workers used to
#: compile them at the same time, each for itself; compiled here first, the workers load them.
COMPILED_ON_IMPORT = (("agents.sampler", "agents.search_net"), ("agents.net", "agents.counterfactual"))


def pytest_xdist_setupnodes(config, specs):
    """Before the xdist workers start (inside the session's time): compile the agent modules
    into numba's cache, the two groups in two processes at once (quick when the cache has them)."""
    procs = [subprocess.Popen([sys.executable, "-c", "; ".join(f"import {m}" for m in group)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for group in COMPILED_ON_IMPORT]
    for p in procs:        # a failure is not reported here: the workers' collection reports it
        try:
            p.wait(timeout=900)
        except subprocess.TimeoutExpired:
            p.kill()


def pytest_addoption(parser):
    parser.addoption("--run-slow", action="store_true", help="run the long differential sweeps")


#: modules holding tests of 10 s and more (a session in a terminal, a training, a tiny run of
#: every experiment), run first: the two xdist workers then share out the short tests at the
#: end, and neither waits long on the other's last test. Whole modules move, so a module's
#: fixtures are still made once per worker.
FIRST = ("tests/ui/test_terminal.py", "tests/analysis/test_analysis.py", "tests/learn/test_recipe.py",
         "tests/agents/test_counterfactual.py", "tests/faults/test_stall.py", "tests/learn/test_train.py",
         "tests/judge/test_runs.py", "tests/bench/test_targets.py", "tests/analysis/test_coverage.py",
         "tests/agents/test_planner.py", "tests/learn/test_net_speed.py")


def pytest_collection_modifyitems(config, items):
    rank = {module: i for i, module in enumerate(FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0], len(FIRST)))    # stable: in order otherwise
    if config.getoption("--run-slow"):
        return
    skip = pytest.mark.skip(reason="long sweep: run with --run-slow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
