"""Shared test set-up: the opt-in marker for long sweeps, the modules run first, and a state
folder of the test run's own (the SHA-256s of the models kc-sim train writes,
kc_sim.net.model_file), so tests neither read nor add to the user's."""

import os
import tempfile

import pytest

os.environ.setdefault("KC_SIM_STATE_DIR", tempfile.mkdtemp(prefix="kc-sim-test-state-"))


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
