"""The watchdog: one per process, made once; a watch per unit of work writes the process's
watch file; a look that fails is said once and the watchdog goes on; the Python loop is
seen through the rounds it registers (no frame or local variable is read), so a loop class
whose locals are named otherwise is watched just the same."""

from __future__ import annotations

import json
import os
import threading
import time

import numpy as np

from kc_sim.play.driver import python_loop
from kc_sim.play.agents.interface import AgentSpec, PythonAgent
from kc_sim.play.driver.runner import play_rounds
from kc_sim.play.driver.watchdog import pending_decision, rounds_in_play
from kc_sim.processes.watch import RunWatch, Work, WorkWatch, watchdog


def test_one_watchdog_per_process():
    assert watchdog() is watchdog()
    assert sum(t.name == "kc-sim-watchdog" for t in threading.enumerate()) == 1


def test_a_watch_per_unit_of_work_keeps_the_watch_file(tmp_path):
    work = Work(3, ("a", "b"), False, 10, "rounds", timeout=5.0, watch_dir=str(tmp_path), task={"x": 1})
    path = tmp_path / f"{os.getpid()}.json"
    with WorkWatch(work):
        entry = json.loads(path.read_text())
        assert entry["state"] == "playing" and entry["chunk"] == 3 and entry["agents"] == ["a", "b"]
        assert entry["limit"] == 5.0 and entry["task"] == {"x": 1}
    assert json.loads(path.read_text())["state"] == "idle"


def test_a_failing_look_is_said_once_and_the_watchdog_goes_on(tmp_path, capfd):
    looks = []

    class Failing(RunWatch):
        def scan(self):
            looks.append(time.monotonic())
            raise RuntimeError("cannot look")

    with Failing(tmp_path):
        deadline = time.monotonic() + 30
        while len(looks) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
    assert len(looks) >= 3                                     # it went on looking
    lines = [x for x in capfd.readouterr().err.splitlines() if "cannot look" in x]
    assert len(lines) == 1 and lines[0].startswith("kc-sim: warning: the watchdog"), lines
    assert watchdog().run is None


class _Peek(PythonAgent):
    """Notes the seed of the round registered for its thread."""

    seeds: set = set()

    def act(self, obs):
        type(self).seeds.add(rounds_in_play().get(threading.get_ident())[1])
        return obs.legal[0]


class _Nesting(PythonAgent):
    """Plays a round of its own inside its first decision, then looks at what is registered."""

    seen: list = []

    def act(self, obs):
        if not type(self).seen:
            me = threading.get_ident()
            type(self).seen.append(rounds_in_play().get(me))
            play_rounds([AgentSpec("Peek", "test agent", factory=_Peek), "random"], [7], "classic")
            type(self).seen.append(rounds_in_play().get(me))
        return obs.legal[0]


def test_a_round_played_inside_a_decision_puts_the_outer_round_back():
    play_rounds([AgentSpec("Nesting", "test agent", factory=_Nesting), "random"], [3], "classic")
    before, after = _Nesting.seen
    assert _Peek.seeds == {7}                                  # the inner round, while it played
    assert before is not None and before == after and before[1] == 3
    assert rounds_in_play().get(threading.get_ident()) is None


class _Waiting(PythonAgent):
    """Waits at its third decision until told to go on."""

    started = threading.Event()
    go = threading.Event()

    def new_round(self, seat, players, rules, seed):
        super().new_round(seat, players, rules, seed)
        self.n = 0

    def act(self, obs):
        self.n += 1
        if self.n == 3 and not type(self).go.is_set():
            type(self).started.set()
            type(self).go.wait(30)
        return obs.legal[0]


class RenamedLoop(python_loop.PythonLoop):
    """A loop whose play has other names for everything (the watchdog must not care)."""

    def play(self, s, n, d, m, totals):
        return super().play(s, n, d, m, totals)


def test_the_decision_of_a_python_loop_is_seen_whatever_its_locals_are_called():
    agent = AgentSpec("Waiting", "test agent", factory=_Waiting)
    seen = []
    thread = threading.Thread(target=lambda: play_rounds([agent, "random"], np.arange(2), "classic",
                                                         _loop_class=RenamedLoop))
    thread.start()
    try:
        assert _Waiting.started.wait(60)
        p = pending_decision(thread.ident)
        seen.append(p)
        time.sleep(0.1)
        assert pending_decision(thread.ident).key == p.key          # unchanged while it waits
    finally:
        _Waiting.go.set()
        thread.join(60)
    p, = seen
    assert p.agent == "Waiting" and p.seat in (0, 1) and p.seed in (0, 1)
    assert pending_decision(thread.ident) is None and rounds_in_play().get(thread.ident) is None


def test_a_death_told_before_the_process_has_ended_still_names_its_agents(tmp_path):
    """The news of a worker's death (a broken pool, dask's KilledWorker) can come while the
    process is still ending; the line that says so still names the chunk and agents its watch
    file gives, once the process is gone (here it ends 0.5 s after the news)."""
    import socket
    import subprocess
    import sys
    from concurrent.futures import Future
    from types import SimpleNamespace

    import pytest

    from kc_sim.processes.backends import WorkerLost, windowed
    from kc_sim.processes.compat import BrokenProcessPool

    dying = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(0.5)"])
    try:
        (tmp_path / f"{dying.pid}.json").write_text(json.dumps(
            {"pid": dying.pid, "host": socket.gethostname(), "state": "playing", "chunk": 7,
             "agents": ["mine:Exit", "random"]}))

        def submit(task):
            f = Future()
            f.set_exception(BrokenProcessPool("a worker died"))
            return f

        with pytest.raises(WorkerLost) as e:
            list(windowed(submit, [SimpleNamespace(index=7)], 2, watch_dir=str(tmp_path)))
    finally:
        dying.wait()
    assert f"{dying.pid} died while playing chunk 7 (agents mine:Exit, random)" in str(e.value), e.value
