"""The stall watchdog, with real processes: a decision that never returns stops the run in
one line naming the agent, seat, seed, round and time, with the round's game record saved,
exit 2, and no process left - in this process, in a loky worker, in a dask worker; in
Python code (stopped in its process) and in C or compiled code (its process killed, the
round found again by a replay). A slow agent gets a progress line and the run goes on."""

from __future__ import annotations

import json
import re

import pexpect
import pytest

from kc_sim.play.driver.runner import AgentFault
from kc_sim.records.check import check_file
from kc_sim.tournament.run import run_tournament
from tests.faults.conftest import KC, agent, kc, rounds, saved_record
from tests.helpers.records import replay_fault_record

LIMIT = "2"
#: Python agents play ~1,000 rounds/s here: chunks of 200 rounds give the workers chunks early
SIZE = ["--chunk-size", "200", "--decision-timeout", LIMIT, "--quiet"]


def _stalled(run, out, name: str, *, killed: bool) -> dict:
    """The run stopped in one line for ``name``'s stall, its record saved and replayable."""
    line = run.one_line_error()
    assert re.search(rf"agent '[^']*:{name}' \(seat \d\) did not decide within {LIMIT} s", line), line
    assert ("its process was killed" in line) == killed, line
    rec, _ = replay_fault_record(saved_record(line, out))
    assert rec["fault"]["kind"] == "stalled" and rec["fault"]["agent"].endswith(f":{name}")
    assert check_file(saved_record(line, out)) == (1, [])      # kc-sim check reads it as far as it went
    assert not run.left, run.left
    return rec


@pytest.mark.parametrize("where", [
    pytest.param(["--jobs", "1"], id="this-process"),
    pytest.param(["--jobs", "2", "--players", "3"], id="loky-worker-3p"),
    pytest.param(["--jobs", "2", "--backend", "dask", "--players", "4"], id="dask-worker-4p"),
])
def test_a_decision_in_a_python_loop_is_stopped_in_its_process(where, tmp_path):
    name = "Spin" if where[1] == "1" else "SpinW"     # ...W: only in a worker
    out = tmp_path / "run"
    run = kc("tournament", "--agents", f"{agent(name)},random,greedy,merger", *SIZE, "--rounds", rounds(where),
             "--out", out, *where)
    _stalled(run, out, name, killed=False)


@pytest.mark.parametrize("where", [
    pytest.param(["--jobs", "1"], id="this-process"),
    pytest.param(["--jobs", "2"], id="loky-worker"),
])
def test_a_decision_stuck_in_c_code_is_killed_and_its_round_found_again(where, tmp_path):
    name = "Sleep" if where[1] == "1" else "SleepW"
    out = tmp_path / "run"
    run = kc("tournament", "--agents", f"{agent(name)},random", *SIZE, "--rounds", rounds(where), "--out", out,
             *where)
    _stalled(run, out, name, killed=True)


@pytest.mark.parametrize("where", [
    pytest.param(["--jobs", "1"], id="this-process"),
    pytest.param(["--jobs", "2", "--backend", "dask"], id="dask-worker"),
])
def test_a_compiled_policy_that_never_returns_is_killed(where, tmp_path):
    """A chunk of compiled agents that finishes no round within the limit: its process is
    killed and the chunk replayed decision by decision to find the round."""
    out = tmp_path / "run"
    run = kc("tournament", "--agents", f"{agent('spin')},random", "--rounds", "20000", "--chunk-size", "2000",
             "--decision-timeout", LIMIT, "--quiet", "--out", out, *where)
    rec = _stalled(run, out, "spin", killed=True)
    assert len(rec["turns"]) >= 2                      # its sixth decision: the record holds the turns before


def test_a_slow_compiled_agent_is_not_taken_for_a_stalled_one(tmp_path):
    """A chunk of compiled agents that takes several times the limit, each of its rounds well
    within it (as ``search-net``'s chunks do), is played to the end: the watchdog times the
    rounds, not the chunk."""
    out = tmp_path / "run"
    run = kc("tournament", "--agents", f"{agent('plod')},random", "--rounds", "1200", "--chunk-size", "1200",
             "--decision-timeout", "1", "--jobs", "1", "--out", out)
    assert run.code == 0, run.err
    play = re.search(r"play (\d+\.\d) s at", run.out + run.err)
    assert play and float(play.group(1)) > 1, run.out + run.err    # the chunk outlasted the limit
    assert json.loads((out / "manifest.json").read_text())["finished"]


def test_bench_agent_stops_a_stalled_agent(tmp_path):
    run = kc("bench-agent", agent("Spin"), "--baselines", "random", "--rounds", "400", "--decision-timeout", LIMIT,
             "--out", tmp_path / "run", "--quiet", "--jobs", "1")
    line = run.one_line_error()
    assert "did not decide within 2 s" in line and not run.left


def test_the_library_raises_the_fault_in_its_own_process(tmp_path):
    """``run_tournament`` (no supervisor, as from a notebook): the watchdog thread stops
    the decision and the AgentFault is raised here, its record saved."""
    with pytest.raises(AgentFault, match=r"did not decide within 1 s .* at seed \d+, round 1") as e:
        run_tournament([agent("Spin"), "random"], players=2, rounds=400, chunk_size=200, jobs=1, quiet=True,
                       out=tmp_path / "run", decision_timeout=1)
    rec, _ = replay_fault_record(e.value.path)
    assert rec["fault"]["kind"] == "stalled" and rec["fault"]["seat"] == e.value.seat


def test_a_slow_agent_gets_a_progress_line_in_a_terminal(tmp_path):
    """In a real terminal (the progress bar on): a line names the slow agent, the run ends well."""
    child = pexpect.spawn(KC[0], [*KC[1:], "tournament", "--agents", f"{agent('Slow')},random", "--rounds", "400",
                                  "--decision-timeout", "10", "--jobs", "1", "--out", str(tmp_path / "run")],
                          timeout=240, encoding="utf-8", dimensions=(40, 160))
    child.expect(r"kc-sim: agent '[^']*:Slow' \(seat 0\) is slow: a decision took \d+\.\d s; the run goes on, and "
                 r"stops at a decision over 10 s \(--decision-timeout\)")
    child.expect(r"400 rounds in .* results in ")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert json.loads((tmp_path / "run" / "manifest.json").read_text())["finished"]


def test_a_slow_agent_in_dask_workers_is_named_once(tmp_path):
    run = kc("tournament", "--agents", f"{agent('Slow')},random", "--rounds", "400", "--chunk-size", "100",
             "--decision-timeout", "10", "--jobs", "2", "--backend", "dask", "--quiet", "--out", tmp_path / "run")
    assert run.code == 0, run.err
    slow = [x for x in run.err.splitlines() if "is slow" in x]
    assert len(slow) == 1 and "Traceback" not in run.err, run.err     # one agent: named once (then every 30 s)
