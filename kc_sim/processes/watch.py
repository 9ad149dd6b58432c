"""The stall watchdog of a run: no decision and no chunk waits forever.

**The limits** (:mod:`kc_sim.processes.watchfile`). Every decision of a Python agent has a
time limit (``--decision-timeout``, default
:data:`~kc_sim.processes.watchfile.DEFAULT_DECISION_TIMEOUT`); a chunk of compiled agents
must finish a round within the same limit (its clock starts again at every round finished,
seen in the rows the compiled loop fills: :func:`~kc_sim.play.driver.watchdog.compiled_progress`),
so a slow agent such as ``search-net`` is never taken for a stalled one, however long its
chunk. A decision slower than :data:`~kc_sim.processes.watchfile.SLOW_AFTER` but within
its limit is named in a progress line (the agent, its seat, how long), and the run goes on.

**One watchdog thread per playing process** (this one, each loky or dask worker; a
:class:`Watchdog`, made once by :func:`watchdog`). While the process plays a unit of work
(a :class:`WorkWatch` around it) the thread, a few times a second:

* looks at the decision the process is in (:func:`kc_sim.play.driver.watchdog.pending_decision`:
  the Python loop registers the round it plays, nothing is added per decision) and stops
  one past its limit by raising :class:`~kc_sim.play.driver.watchdog.AgentStalled` in it: the run
  then stops as for an agent that raised, in one line naming the agent, seat, seed, round
  and the time, with the round's game record saved, whatever the backend;
* keeps the process's *watch file* ``<run>/.watch/<pid>.json`` (the chunk and its task,
  since when, its limit, slow decisions) and touches it (a heartbeat). A thread cannot
  run while compiled code holds the interpreter, so a process stuck in compiled or C code
  stops touching it; a decision it could not stop is marked ``stuck`` in it.

A look that fails is said once on stderr, in one line, and the watchdog goes on looking:
it never brings a run down by itself, and never goes quiet either.

**Stopping a stuck process from outside.** The parent's :class:`RunWatch` reads the
workers' watch files (:func:`~kc_sim.processes.watchfile.stuck_reason`): it prints their
slow decisions, and kills a worker that is stuck (a chunk past its limit, no heartbeat past
the limit, or marked stuck); the run then replays that chunk to find the round
(:mod:`kc_sim.tournament.rederive`) and stops in one line. The parent itself is watched the
same way by the command's supervisor (:mod:`kc_sim.processes.supervise`).

Imported by worker processes: the standard library and the play layer only (numba's
event API once a chunk is played: a chunk's clock stops while numba compiles).
"""

from __future__ import annotations

import functools
import json
import os
import socket
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from kc_sim.play.driver.watchdog import compiled_progress, pending_decision, stop_decision
from kc_sim.processes.supervise import supervision
from kc_sim.processes.watchfile import (
    DEFAULT_DECISION_TIMEOUT,
    GRACE,
    SLOW_AFTER,
    SLOW_EVERY,
    WARM_LIMIT,
    kill,
    ours,
    read_watch,
    stuck_reason,
    wall,
)
from kc_sim.support.atomic import write_text_atomic
from kc_sim.support.notice import notice

__all__ = ["RunWatch", "Watchdog", "Work", "WorkWatch", "watchdog"]


@dataclass(frozen=True)
class Work:
    """A unit of work as the watchdog sees it (the tournament makes one per chunk)."""

    index: int                    # the chunk (-1: the warm-up, which may compile)
    agents: tuple[str, ...]       # who plays it (named when its process dies)
    compiled: bool                # every agent a compiled policy: each round must finish within the limit
    units: int                    # rounds or matches in it
    kind: str                     # what a unit is ("rounds", "matches")
    timeout: float | None = None  # seconds a decision may take (None: the default)
    watch_dir: str | None = None  # where this process's watch file goes (None: none)
    task: dict | None = None      # the task as JSON, for a replay of a stuck chunk


class Watchdog:
    """The watchdog of this process (one per process, made by :func:`watchdog`): the unit
    of work it plays (:meth:`begin`, :meth:`end`) and, in the parent of a run (a
    :class:`RunWatch` open), the other playing processes."""

    def __init__(self):
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self.current: dict | None = None      # the chunk being played here (the watch file's content)
        self.thread_id = 0                    # the thread playing it
        self.file: Path | None = None
        self.timeout = DEFAULT_DECISION_TIMEOUT
        # the decision being looked at
        self._key = None
        self._since = 0.0
        self._stopped = 0.0
        self._slow_seen = False
        self._pending = None
        self._compile_t0 = 0.0
        self._rows = None                     # the compiled block's progress key at the last look
        self.slow: dict[str, dict] = {}       # agent -> {"seat", "n", "longest"} of its slow decisions here
        self.run: RunWatch | None = None      # the run this process is the parent of, while it runs
        self.failures: set[str] = set()       # looks that failed, said once each
        self._thread = threading.Thread(target=self._loop, name="kc-sim-watchdog", daemon=True)
        self._thread.start()

    # --- this process -----------------------------------------------------------------

    def begin(self, work: Work) -> None:
        """Watch ``work`` (played by the calling thread): write the watch file."""
        self.timeout = float(work.timeout or DEFAULT_DECISION_TIMEOUT)
        compiled, limit = work.compiled, self.timeout
        if work.index < 0:                      # the warm-up: only the heartbeat counts (see WARM_LIMIT)
            compiled, limit = False, max(self.timeout, WARM_LIMIT)
        self.file = Path(work.watch_dir) / f"{os.getpid()}.json" if work.watch_dir else None
        _compile_listener()
        with self._lock:
            self.thread_id = threading.get_ident()
            self._key, self._stopped, self._slow_seen = None, 0.0, False
            self.current = {"pid": os.getpid(), "host": socket.gethostname(), "state": "playing",
                            "chunk": work.index, "agents": list(work.agents), "compiled": compiled,
                            "units": work.units, "since": wall(), "limit": limit, "timeout": self.timeout,
                            "task": work.task}
            self._write()
        self._wake.set()

    def end(self, work: Work, compiled: bool, seconds: float) -> None:
        """The unit is played: the process is idle."""
        self._slow_done(time.monotonic() - self._since)      # a slow decision seen to start but not to end
        with self._lock:
            if self.current is not None:
                self.current = {**self.current, "state": "idle"}
                self._write()
            self.current = None

    def compiling(self, started: bool) -> None:
        """numba starts (or ends) compiling in this process: while it compiles, a chunk's
        clock stops and only the heartbeat counts (see WARM_LIMIT)."""
        with self._lock:
            if self.current is None or self.current["state"] not in ("playing", "compiling"):
                return
            if started:
                self._compile_t0 = wall()
                self.current = {**self.current, "state": "compiling"}
            else:
                spent = wall() - self._compile_t0
                self.current = {**self.current, "state": "playing", "since": self.current["since"] + spent}
            self._key = None
            self._write()

    def _write(self) -> None:
        """Write the watch file (atomically; the caller holds the lock)."""
        file = self.file
        if file is None or self.current is None:
            return
        entry = dict(self.current, slow=self.slow)
        try:
            file.parent.mkdir(exist_ok=True)
            write_text_atomic(file, json.dumps(entry))
            supervision().tell_watch(file)
        except OSError:          # e.g. a remote worker without the run folder: the in-process watch still works
            pass

    def _loop(self) -> None:
        while True:
            self._wake.wait(self._interval())
            self._wake.clear()
            try:
                with self._lock:
                    current = self.current
                if current is not None:
                    self._look(current)
                run = self.run
                if run is not None:
                    run.scan()
            except Exception as e:  # noqa: BLE001 - the watchdog never brings a run down by itself
                self._failed(e)

    def _failed(self, e: Exception) -> None:
        """A look failed: say so once (one line on stderr), and go on looking."""
        what = f"{type(e).__name__}: {e}"
        if what not in self.failures:
            self.failures.add(what)
            notice(f"warning: the watchdog of process {os.getpid()} failed a look ({what}); it goes on watching")

    def _interval(self) -> float:
        return max(0.02, min(0.25, self.timeout / 20))

    def _look(self, current: dict) -> None:
        """One look at this process's chunk: heartbeat, and the decision it is in."""
        file = self.file
        if file is not None:
            try:
                os.utime(file)
            except OSError:
                pass
        if current["compiled"] or current["state"] != "playing":
            self._key = None
            if current["compiled"] and current["state"] == "playing":
                self._rounds_done(current)
            return
        now = time.monotonic()
        p = pending_decision(self.thread_id)
        if p is None or p.key != self._key:
            if self._key is not None:
                self._slow_done(now - self._since)
            self._key, self._since, self._stopped, self._slow_seen = (p.key if p else None), now, 0.0, False
            self._pending = p
            return
        waited = now - self._since
        if waited > min(SLOW_AFTER, self.timeout / 4):
            self._slow_seen = True
        if waited > self.timeout and not self._stopped:
            stop_decision(self.thread_id, p, self.timeout, waited)
            self._stopped = now
        elif self._stopped and now - self._stopped > GRACE:
            self._stuck(p)

    def _rounds_done(self, current: dict) -> None:
        """A chunk of compiled agents finished a round since the last look: its clock starts
        again (``since`` in the watch file, rewritten at most every quarter of the limit, or
        second if that is less)."""
        key = compiled_progress(self.thread_id)
        if key is None or key == self._rows:
            return
        self._rows = key
        now = wall()
        if now - current["since"] >= min(1.0, current["limit"] / 4):
            with self._lock:
                if self.current is current:
                    self.current = {**current, "since": now}
                    self._write()

    def _stuck(self, p) -> None:
        """The decision ``p`` was stopped but did not stop (compiled or C code): mark the
        process stuck, for whoever watches it from outside."""
        with self._lock:
            if self.current is not None and self.current.get("state") == "playing":
                why = (f"agent {p.agent!r} (seat {p.seat}) did not decide within {self.timeout:g} s and could not "
                       f"be stopped where it is (in compiled or C code) at seed {p.seed}")
                self.current = {**self.current, "state": "stuck", "why": why}
                self._write()
                run = self.run
                if run is not None and not supervision().active:
                    run.note(f"{why}: this process cannot stop it; kill it (the kc-sim command stops it itself)")

    def _slow_done(self, seconds: float) -> None:
        """The decision looked at ended: if it was slow (and not stopped), count it; the parent
        names it (a worker's watch file says it)."""
        with self._lock:
            slow, self._slow_seen = self._slow_seen and not self._stopped, False
        p = self._pending
        if not slow or p is None or p.agent is None:
            return
        s = self.slow.setdefault(p.agent, {"seat": p.seat, "n": 0, "longest": 0.0, "last": 0.0})
        s.update(seat=p.seat, n=s["n"] + 1, longest=max(s["longest"], seconds), last=seconds)
        run = self.run
        if run is not None:
            run.tell_slow(p.agent, s, self.timeout)
        else:
            with self._lock:
                self._write()


class RunWatch:
    """The parent's watch over a run, while it runs (a context manager): the other playing
    processes, through their watch files in ``watch_dir``; slow decisions told with
    :attr:`note` (a progress line; on stderr by default), a stuck worker killed and its
    reason kept (:attr:`verdict`, :meth:`check`)."""

    def __init__(self, watch_dir):
        self.dir = Path(watch_dir).resolve()
        self.note = notice
        # (pid, agent, "n") -> the slow decisions of that agent in that process already seen;
        # ("told", agent) -> when the agent's slowness was last told (time.monotonic())
        self.told: dict[tuple, float] = {}
        self.verdict: tuple[dict, str] | None = None
        self._dog: Watchdog | None = None

    def __enter__(self) -> RunWatch:
        self._dog = watchdog()
        self._dog.run = self
        return self

    def __exit__(self, *exc) -> None:
        if self._dog is not None and self._dog.run is self:
            self._dog.run = None
        self.note = notice

    def scan(self) -> None:
        """Read the workers' watch files: tell their slow agents, kill a stuck one."""
        now = wall()
        timeout = self._dog.timeout if self._dog is not None else DEFAULT_DECISION_TIMEOUT
        for path in sorted(self.dir.glob("*.json")):
            got = read_watch(path)
            if got is None:
                continue
            entry, beat = got
            pid = entry.get("pid")
            if pid == os.getpid():
                continue
            for agent, s in (entry.get("slow") or {}).items():
                if s.get("n", 0) > self.told.get((pid, agent, "n"), 0):
                    self.told[(pid, agent, "n")] = s["n"]
                    self.tell_slow(agent, s, timeout)
            why = stuck_reason(entry, beat, now)
            if why is not None and self.verdict is None and ours(entry):
                self.verdict = (entry, why)
                kill(pid)

    def tell_slow(self, agent: str, s: dict, timeout: float) -> None:
        """Name a slow agent (``s``: its seat, count, longest and last decision), at most
        every SLOW_EVERY seconds whichever process it plays in."""
        key = ("told", agent)
        now = time.monotonic()
        if key in self.told and now - self.told[key] < SLOW_EVERY:
            return
        self.told[key] = now
        more = f" ({s['n']} decisions over {min(SLOW_AFTER, timeout / 4):g} s so far, the longest " \
               f"{s['longest']:.1f} s)" if s["n"] > 1 else ""
        self.note(f"agent {agent!r} (seat {s['seat']}) is slow: a decision took {s['last']:.1f} s{more}; the run "
                  f"goes on, and stops at a decision over {timeout:g} s (--decision-timeout)")

    def check(self) -> str | None:
        """What the waiting parent should stop for: a worker found stuck (and killed)."""
        if self.verdict is None:
            return None
        entry, why = self.verdict
        return f"worker {entry.get('pid')} was stopped: {why}"


class WorkWatch:
    """The watch over one unit of work while the calling thread plays it (a context
    manager around playing one chunk): this process's watchdog looks at it."""

    def __init__(self, work: Work):
        self.work = work
        self._t0 = 0.0

    def __enter__(self) -> WorkWatch:
        watchdog().begin(self.work)
        self._t0 = time.perf_counter()
        return self

    def __exit__(self, exc_type, *exc) -> None:
        watchdog().end(self.work, self.work.compiled and exc_type is None, time.perf_counter() - self._t0)


@functools.cache
def watchdog() -> Watchdog:
    """This process's watchdog (its thread started on first use)."""
    return Watchdog()


@functools.cache
def _compile_listener():
    """Tell this process's watchdog when numba starts and ends compiling here (made and
    registered once per process)."""
    from numba.core import event  # lazy: numba is loaded by whoever plays a chunk anyway

    class Compiles(event.Listener):
        depth = 0

        def on_start(self, ev):
            self.depth += 1
            if self.depth == 1:
                watchdog().compiling(True)

        def on_end(self, ev):
            self.depth -= 1
            if self.depth == 0:
                watchdog().compiling(False)

    listener = Compiles()
    event.register("numba:compile", listener)
    return listener
