"""Shared test set-up: the opt-in marker for long sweeps, and a state folder of the test
run's own (the SHA-256s of the models kc-sim train writes, kc_sim.net.model_file), so
tests neither read nor add to the user's."""

import os
import tempfile

import pytest

os.environ.setdefault("KC_SIM_STATE_DIR", tempfile.mkdtemp(prefix="kc-sim-test-state-"))


def pytest_addoption(parser):
    parser.addoption("--run-slow", action="store_true", help="run the long differential sweeps")


def pytest_collection_modifyitems(config, items):
    if config.getoption("--run-slow"):
        return
    skip = pytest.mark.skip(reason="long sweep: run with --run-slow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
