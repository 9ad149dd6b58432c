"""Shared test set-up: the opt-in marker for long sweeps."""

import pytest


def pytest_addoption(parser):
    parser.addoption("--run-slow", action="store_true", help="run the long differential sweeps")


def pytest_collection_modifyitems(config, items):
    if config.getoption("--run-slow"):
        return
    skip = pytest.mark.skip(reason="long sweep: run with --run-slow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
