"""One run at a time per folder: a second command on a folder in use says in one line who
holds it (pid, command, since when) and exits 2, or waits for it with ``--wait``; of two
identical commands started together one plays and the other stops, and what is left equals
a run made alone. The first run is held at its first decision (the ``Gate`` agent) until
the test lets it go."""

from __future__ import annotations

import json
import re
import time

import pandas as pd

from kc_sim.runs import layout, read_rounds, read_summary
from tests.faults.conftest import agent, finish, kc, start

ARGS = ["tournament", "--agents", f"{agent('Gate')},random", "--rounds", "400", "--chunk-size", "100",
        "--jobs", "1", "--decision-timeout", "600", "--quiet"]


def _until(condition, what: str, within: float = 180.0):
    t0 = time.monotonic()
    while time.monotonic() - t0 < within:
        got = condition()
        if got:
            return got
        time.sleep(0.1)
    raise AssertionError(f"never: {what}")


def _holder(out) -> dict | None:
    """What the lock file of ``out`` says, once the run holding it has written its manifest."""
    try:
        return json.loads((out / ".lock").read_text()) if (out / layout.MANIFEST_FILE).exists() else None
    except (OSError, ValueError):
        return None


def test_a_second_command_is_refused_naming_the_first(tmp_path):
    out, gate = tmp_path / "run", tmp_path / "gate"
    first = start(*ARGS, "--out", out, env={"KC_TEST_GATE": str(gate)})
    holder = _until(lambda: _holder(out), "the first run holds the folder")
    line = kc(*ARGS, "--out", out).one_line_error()
    assert re.search(rf"{out} is in use by another run: pid {holder['pid']} \(kc-sim tournament --agents "
                     r"\S+:Gate,random .*\) since \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d", line), line
    assert "give --wait" in line
    gate.touch()
    done = finish(first)
    assert done.code == 0, done.err
    assert json.loads((out / layout.MANIFEST_FILE).read_text())["finished"]


def test_wait_starts_once_the_first_has_ended(tmp_path):
    out, gate = tmp_path / "run", tmp_path / "gate"
    first = start(*ARGS, "--out", out, env={"KC_TEST_GATE": str(gate)})
    _until(lambda: _holder(out), "the first run holds the folder")
    log = tmp_path / "second.err"
    with open(log, "w") as err:
        second = start(*ARGS, "--out", out, "--wait", stderr=err)
        _until(lambda: "waiting for the run that holds" in log.read_text(), "the second run waits")
        assert second.poll() is None
        gate.touch()
        assert finish(first).code == 0
        done = finish(second)
    assert done.code == 0, log.read_text()
    assert "nothing left to play" in done.out                  # the first finished every chunk


def test_two_commands_started_together(tmp_path):
    """As in the report: two identical runs into one folder at once. One plays, the other
    stops naming it; what is left equals a run made alone."""
    out, alone, gate = tmp_path / "run", tmp_path / "alone", tmp_path / "gate"
    a, b = (start(*ARGS, "--out", out, env={"KC_TEST_GATE": str(gate)}) for _ in range(2))
    loser = _until(lambda: next((p for p in (a, b) if p.poll() is not None), None), "one of them stopped")
    winner = b if loser is a else a
    assert "is in use by another run" in finish(loser).one_line_error()
    gate.touch()
    assert finish(winner).code == 0
    assert kc(*ARGS, "--out", alone, env={"KC_TEST_GATE": str(gate)}).code == 0
    pd.testing.assert_frame_equal(read_rounds(out), read_rounds(alone))
    pd.testing.assert_frame_equal(read_summary(out), read_summary(alone))
