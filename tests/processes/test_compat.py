"""The one module that reaches other libraries' private parts checks, when the pool starts,
that each is there: on the installed versions it is; when one is missing it says so in one
line, naming the joblib version and the supported range."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import joblib
import pytest

from kc_sim.errors import UserError
from kc_sim.processes import compat
from kc_sim.processes.pool import WorkerPool

ROOT = Path(__file__).resolve().parents[2]


def test_the_installed_loky_has_what_the_pool_reaches():
    with WorkerPool() as pool:
        pool.start(1)                                  # checks, as every start does
        compat.check_loky(pool.executor)
        assert compat.worker_processes(pool.executor) == pool.processes()


def test_a_missing_attribute_is_said_in_one_line(monkeypatch):
    fake = SimpleNamespace(_executor_manager_thread=None, _processes={})    # no _result_queue
    with pytest.raises(UserError) as e:
        compat.check_loky(fake)
    message = str(e.value)
    assert "\n" not in message
    assert f"joblib {joblib.__version__}" in message and compat.SUPPORTED_JOBLIB in message
    assert "_result_queue" in message and "_executor_manager_thread" not in message
    monkeypatch.setattr(compat, "get_reusable_executor", lambda **kw: fake)
    with pytest.raises(UserError, match="is not supported by kc-sim's worker pool"):
        WorkerPool().start(1)                          # at the pool's start, not when a worker dies


def test_pyprojects_bound_is_the_supported_range_and_holds_the_installed_joblib():
    declared = re.search(r'"joblib([^"]+)"', (ROOT / "pyproject.toml").read_text()).group(1)
    assert declared == compat.SUPPORTED_JOBLIB
    low, high = re.fullmatch(r">=([\d.]+),<([\d.]+)", declared).groups()

    def version(text):
        return tuple(int(x) for x in text.split(".")[:2])

    assert version(low) <= version(joblib.__version__) < version(high)
