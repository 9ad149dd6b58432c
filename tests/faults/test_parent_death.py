"""No process of a run outlives the command: kill -9, SIGTERM or SIGHUP of the command
(the process the shell started) with loky workers and with a local dask cluster, and
kill -9 of the process that holds the workers, leave no process of its session behind.
An agent that ends its process (``os._exit``) stops the run in one line, exit 2."""

from __future__ import annotations

import json
import os
import signal
import time

import pytest

from tests.faults.conftest import agent, finish, kc, no_process_left, session_processes, rounds, start
from tests.faults.hostile import KC

#: long enough to be killed in the middle (greedy plays ~300,000 rounds/s a core)
LONG = ["--agents", "greedy,random,merger", "--players", "3", "--rounds", "50000000", "--quiet"]


def _playing(out, p, workers: int, within: float = 180.0) -> None:
    """Wait until the run in ``out`` has stored a chunk and its session holds the command,
    its child and ``workers`` worker processes."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < within:
        assert p.poll() is None, p.communicate()
        try:
            done = json.loads((out / "manifest.json").read_text())["units_done"] > 0
        except (OSError, ValueError, KeyError):
            done = False
        procs = session_processes(p.pid)
        if done and sum("popen_loky_posix" in x or "spawn_main" in x for x in procs) >= workers:
            return
        time.sleep(0.5)
    pytest.fail(f"the run did not get going: {session_processes(p.pid)}")


@pytest.mark.parametrize("backend, sig", [
    pytest.param("loky", signal.SIGKILL, id="loky-kill-9"),
    pytest.param("loky", signal.SIGTERM, id="loky-TERM"),
    pytest.param("loky", signal.SIGHUP, id="loky-HUP"),
    pytest.param("dask", signal.SIGKILL, id="dask-kill-9"),
    pytest.param("dask", signal.SIGTERM, id="dask-TERM"),       # (SIGHUP takes the same path)
])
def test_no_process_outlives_the_command(backend, sig, tmp_path):
    out = tmp_path / "run"
    p = start("tournament", *LONG, "--jobs", "2", "--backend", backend, "--out", out)
    _playing(out, p, workers=1 if backend == "loky" else 2)
    os.kill(p.pid, sig)
    run = finish(p, timeout=60)
    assert not run.left, run.left
    assert "Traceback" not in run.err, run.err                 # whole: which thread, which error
    if sig != signal.SIGKILL:                  # it says what it kept
        assert run.code == 128 + sig, run.err
        assert "rerun the same command" in run.err, run.err
    # and the chunks it stored are intact: a rerun of the same command resumes from them
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["units_done"] > 0 and not manifest["finished"]


def test_killing_the_process_with_the_workers_says_so(tmp_path):
    """kill -9 of the process that plays (the command's child): the command says so in one
    line, exit 2, and its workers die too."""
    out = tmp_path / "run"
    p = start("tournament", *LONG, "--jobs", "2", "--out", out)
    _playing(out, p, workers=1)
    child = next(int(x.split()[0]) for x in session_processes(p.pid)
                 if "kc_sim.cli" in x and int(x.split()[0]) != p.pid)
    os.kill(child, signal.SIGKILL)
    run = finish(p, timeout=60)
    line = run.one_line_error()
    # "while playing chunk N" only when it was playing one itself (it plays chunks until the
    # workers are warm, then waits for theirs)
    assert f"process {child} was killed by SIGKILL" in line and "rerun the same command to resume" in line
    assert not run.left, run.left


def test_without_the_supervisor_workers_still_die_with_their_parent(tmp_path):
    """KC_SIM_SUPERVISE=0 (the command plays in its own process, as from Python): kill -9
    of it still takes the loky workers and resource trackers with it."""
    out = tmp_path / "run"
    p = start("tournament", *LONG, "--jobs", "2", "--out", out, env={"KC_SIM_SUPERVISE": "0"})
    _playing(out, p, workers=1)
    assert sum("kc_sim.cli" in x for x in session_processes(p.pid)) == 1
    os.kill(p.pid, signal.SIGKILL)
    p.communicate()
    assert not no_process_left(p.pid)


@pytest.mark.parametrize("where", [
    pytest.param(["--jobs", "1"], id="this-process"),
    pytest.param(["--jobs", "2"], id="loky-worker"),
    pytest.param(["--jobs", "2", "--backend", "dask"], id="dask-worker"),
])
def test_an_agent_that_ends_its_process(where, tmp_path):
    name = "Exit" if where[1] == "1" else "ExitW"
    run = kc("tournament", "--agents", f"{agent(name)},random", "--rounds", rounds(where), "--chunk-size", "200",
             "--quiet", "--out", tmp_path / "run", *where)
    line = run.one_line_error()
    assert "while playing chunk" in line and f":{name}, random" in line, line
    assert "os._exit" in line and "rerun the same command to resume" in line
    assert not run.left, run.left


def test_an_agent_that_ends_the_process_while_it_warms_up(tmp_path):
    """``os._exit`` in the warm-up (exit 1 and no word before): one line, exit 2."""
    bad = tmp_path / "bad.py"
    bad.write_text("import os\nfrom kc_sim.play.agents.interface import PythonAgent\n\n"
                   "class Bye(PythonAgent):\n    def act(self, obs):\n        os._exit(1)\n")
    run = kc("tournament", "--agents", f"{bad}:Bye,random", "--rounds", "100", "--quiet", "--out", tmp_path / "run")
    line = run.one_line_error()
    assert "ended with exit code 1 while warming up the agents" in line and "Bye" in line
    assert not run.left


def test_in_a_terminal_the_line_about_a_killed_process_is_not_glued_to_its_progress_bar(tmp_path):
    """In a real terminal the killed process leaves its progress bar with the cursor at its end;
    the command's line clears that line first, so the user reads one clean line."""
    import pexpect
    import psutil

    out = tmp_path / "run"
    args = ["tournament", "--agents", "greedy,random,merger", "--players", "3", "--rounds", "50000000",
            "--jobs", "1", "--out", str(out)]
    child = pexpect.spawn(KC[0], [*KC[1:], *args], encoding="utf-8", timeout=180, dimensions=(40, 200),
                          env={**os.environ, "TERM": "xterm"})
    try:
        child.expect("rounds/s")                                    # the bar is drawn
        inner = next(c.pid for c in psutil.Process(child.pid).children() if "tournament" in c.cmdline())
        os.kill(inner, signal.SIGKILL)
        child.expect(pexpect.EOF, timeout=60)
        text = child.before
    finally:
        child.close(force=True)
    assert child.exitstatus == 2, text[-2000:]
    at = text.index("kc-sim: error: the run's process")
    assert text[:at].endswith(("\n", "\r\x1b[K")), repr(text[max(0, at - 80):at + 60])
