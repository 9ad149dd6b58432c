"""An agent whose constructor raises stops every command in one line naming the agent and
what it raised, exit 2 - made in this process, in a loky worker, in a dask worker, by
``kc-sim record`` and by ``kc-sim bench-agent --check``."""

from __future__ import annotations

import pytest

from kc_sim.errors import UserError
from kc_sim.play.driver.seat import SeatedAgents
from tests.faults.conftest import agent, kc, rounds

MESSAGE = "could not be made: its constructor raised RuntimeError: no model file here"


def test_the_seat_driver_names_the_agent():
    with pytest.raises(UserError, match=rf"agent '[^']*:BrokenInit' {MESSAGE}$"):
        SeatedAgents([agent("BrokenInit"), "random"], "classic")


@pytest.mark.parametrize("where", [
    pytest.param(["--jobs", "1"], id="this-process"),
    pytest.param(["--jobs", "2"], id="loky-worker"),
    pytest.param(["--jobs", "2", "--backend", "dask"], id="dask-worker"),
])
def test_tournament(where, tmp_path):
    name = "BrokenInit" if where[1] == "1" else "BrokenInitW"     # ...W: raises only in a worker
    run = kc("tournament", "--agents", f"{agent(name)},random", "--rounds", rounds(where), "--chunk-size", "200",
             "--quiet", "--out", tmp_path / "run", *where)
    assert MESSAGE in run.one_line_error()
    assert not run.left


@pytest.mark.parametrize("command", [
    pytest.param(["record", "--agents", f"{agent('BrokenInit')},random", "--rounds", "2"], id="record"),
    pytest.param(["bench-agent", agent("BrokenInit"), "--check", "--rounds", "100"], id="bench-agent-check"),
])
def test_other_commands(command, tmp_path):
    extra = ["-o", tmp_path / "r.jsonl"] if command[0] == "record" else []
    run = kc(*command, *extra)
    assert MESSAGE in run.one_line_error()
