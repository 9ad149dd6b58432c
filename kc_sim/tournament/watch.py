"""The stall watchdog of a run: no decision and no chunk waits forever.

**The limits.** Every decision of a Python agent has a time limit (``--decision-timeout``,
default :data:`DEFAULT_DECISION_TIMEOUT`); every chunk of compiled agents one derived from
the rate measured so far in its process (:data:`CHUNK_FACTOR` times its expected time, at
least the decision limit). A decision slower than :data:`SLOW_AFTER` but within its limit
is named in a progress line (the agent, its seat, how long), and the run goes on.

**One watchdog thread per playing process** (this one, each loky or dask worker; a
:class:`Watchdog`). While the process plays a chunk the thread, a few times a second:

* looks at the decision the process is in (:func:`kc_sim.play.watchdog.pending_decision`;
  nothing is added to the Python loop per decision) and stops one past its limit by
  raising :class:`~kc_sim.play.watchdog.AgentStalled` in it: the run then stops as for
  an agent that raised, in one line naming the agent, seat, seed, round and the time,
  with the round's game record saved, whatever the backend;
* keeps the process's *watch file* ``<run>/.watch/<pid>.json`` (the chunk and its task,
  since when, its limit, slow decisions) and touches it (a heartbeat). A thread cannot
  run while compiled code holds the interpreter, so a process stuck in compiled or C code
  stops touching it; a decision it could not stop is marked ``stuck`` in it.

**Stopping a stuck process from outside.** The parent's thread reads the workers' watch
files (:func:`stuck_reason`): it prints their slow decisions, and kills a worker that is
stuck (a chunk past its limit, no heartbeat past the limit, or marked stuck); the run then
replays that chunk in a child process to find the round, agent and seat and save the
record (:mod:`kc_sim.tournament.rederive`) and stops in one line. The parent itself is
watched the same way by the command's supervisor (:mod:`kc_sim.tournament.supervise`).

Imported by worker processes: the standard library and the play layer only (numba's
event API once a chunk is played: a chunk's clock stops while numba compiles).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sys
import threading
import time
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path

from kc_sim.play.watchdog import pending_decision, stop_decision

__all__ = ["DEFAULT_DECISION_TIMEOUT", "Watchdog", "check_timeout", "dead_players", "playing", "read_watch",
           "stuck_reason", "watching_run"]

#: the default time limit of one decision of a Python agent, in seconds
DEFAULT_DECISION_TIMEOUT = 60.0
#: a chunk of compiled agents may take this many times its expected time (its rounds at the
#: rate measured so far in its process)
CHUNK_FACTOR = 10.0
#: rounds per second per process assumed before a process has timed a chunk of compiled
#: agents (a tenth of greedy self-play); matches count as :data:`ROUNDS_PER_MATCH` rounds
PRIOR_RATE = 30_000.0
ROUNDS_PER_MATCH = 8
#: the warm-up compiles (tens of seconds from an empty cache, some of it in calls that hold
#: the interpreter for seconds): it is stuck once its process gave no heartbeat for this long
#: (or the decision limit, if longer); its Python agents' decisions have the usual limit
WARM_LIMIT = 30.0
#: a decision longer than this (or a quarter of the limit, if less) is named as slow
SLOW_AFTER = 1.0
#: how often a slow agent is named again (with its count and longest decision)
SLOW_EVERY = 30.0
#: after a decision was stopped (or after the limit without a heartbeat), this long before
#: the process counts as stuck in compiled or C code
GRACE = 2.0

_WALL = time.time          # watch files are compared across processes: wall-clock seconds


def check_timeout(value) -> float:
    """``--decision-timeout`` checked: positive seconds (None: the default)."""
    from kc_sim.errors import UserError  # lazy: as light as possible for the workers
    if value is None:
        return DEFAULT_DECISION_TIMEOUT
    try:
        t = float(value)
    except (TypeError, ValueError):
        t = float("nan")
    if not t > 0 or t == float("inf"):
        raise UserError(f"bad --decision-timeout {value}: expected a positive number of seconds, e.g. 60")
    return t


def read_watch(path: Path) -> tuple[dict, float] | None:
    """A watch file and its last heartbeat (mtime), or None if it is gone or half-written."""
    try:
        beat = os.stat(path).st_mtime
        entry = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return (entry, beat) if isinstance(entry, dict) else None


def stuck_reason(entry: dict, beat: float, now: float | None = None) -> str | None:
    """Why the process of a watch file counts as stuck (None while it does not): it marked
    itself stuck, its chunk of compiled agents passed its limit, or it gave no heartbeat
    for longer than its limit."""
    if entry.get("state") == "stuck":
        return str(entry.get("why"))
    now = _WALL() if now is None else now
    limit = float(entry.get("limit", DEFAULT_DECISION_TIMEOUT))
    if entry.get("state") == "compiling":           # numba compiling: only the heartbeat counts
        limit = max(limit, WARM_LIMIT)
        return f"it gave no sign of life for {now - beat:.0f} s" if now - beat > limit + GRACE else None
    if entry.get("state") != "playing":
        return None
    ran = now - float(entry.get("since", now))
    if entry.get("compiled") and ran > limit:
        what = "the warm-up" if entry.get("chunk", 0) < 0 else f"chunk {entry.get('chunk')} of compiled agents"
        return f"{what} ran {ran:.0f} s, past its limit of {limit:.0f} s"
    if now - beat > limit + GRACE:
        return f"it gave no sign of life for {now - beat:.0f} s (stuck in compiled or C code)"
    return None


def _task_dict(task) -> dict:
    return {k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(task).items()}


class Watchdog:
    """The watchdog of this process (one per process, made by :func:`_dog`): the chunk it
    plays (:meth:`begin`, :meth:`end`) and, in the parent of a run (:func:`watching_run`),
    the other playing processes."""

    def __init__(self):
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self.current: dict | None = None      # the chunk being played here (the watch file's content)
        self.thread_id = 0                    # the thread playing it
        self.file: Path | None = None
        self.timeout = DEFAULT_DECISION_TIMEOUT
        self.rates: dict[str, tuple[float, float]] = {}   # mode -> (units, seconds) of compiled chunks here
        # the decision being looked at
        self._key = None
        self._since = 0.0
        self._stopped = 0.0
        self._slow_seen = False
        self._pending = None
        self._compile_t0 = 0.0
        self.slow: dict[str, dict] = {}       # agent -> {"seat", "n", "longest"} of its slow decisions here
        # the parent's view of the run
        self.run_dir: Path | None = None
        self.note = _stderr
        self.told: dict[tuple, float] = {}    # (pid, agent) -> when its slowness was last told
        self.verdict: tuple[dict, str] | None = None
        self._thread = threading.Thread(target=self._loop, name="kc-sim-watchdog", daemon=True)
        self._thread.start()

    # --- this process -----------------------------------------------------------------

    def begin(self, task, compiled: bool, units: int) -> None:
        """Watch the chunk ``task`` (played by the calling thread): write the watch file."""
        self.timeout = float(task.decision_timeout or DEFAULT_DECISION_TIMEOUT)
        if task.index < 0:                      # the warm-up: only the heartbeat counts (see WARM_LIMIT)
            compiled, limit = False, max(self.timeout, WARM_LIMIT)
        elif compiled:
            done, secs = self.rates.get(task.mode, (0.0, 0.0))
            rate = done / secs if secs > 0 else PRIOR_RATE / (1 if task.mode == "rounds" else ROUNDS_PER_MATCH)
            limit = max(self.timeout, CHUNK_FACTOR * units / rate)
        else:
            limit = self.timeout
        self.file = Path(task.watch_dir) / f"{os.getpid()}.json" if task.watch_dir else None
        _listen_to_compiles(self)
        with self._lock:
            self.thread_id = threading.get_ident()
            self._key, self._stopped, self._slow_seen = None, 0.0, False
            self.current = {"pid": os.getpid(), "host": socket.gethostname(), "state": "playing",
                            "chunk": task.index, "agents": list(task.names), "compiled": compiled, "units": units,
                            "since": _WALL(), "limit": limit, "timeout": self.timeout, "task": _task_dict(task)}
            self._write()
        self._wake.set()

    def end(self, task, compiled: bool, units: int, seconds: float) -> None:
        """The chunk is played: the process is idle; a chunk of compiled agents adds to the rate."""
        if compiled and task.index >= 0:
            done, secs = self.rates.get(task.mode, (0.0, 0.0))
            self.rates[task.mode] = (done + units, secs + seconds)
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
                self._compile_t0 = _WALL()
                self.current = {**self.current, "state": "compiling"}
            else:
                spent = _WALL() - self._compile_t0
                self.current = {**self.current, "state": "playing", "since": self.current["since"] + spent}
            self._key = None
            self._write()

    def _write(self) -> None:
        """Write the watch file (atomically; the caller holds the lock)."""
        if self.file is None or self.current is None:
            return
        entry = dict(self.current, slow=self.slow)
        tmp = self.file.with_name(f".{self.file.name}.tmp")
        try:
            self.file.parent.mkdir(exist_ok=True)
            tmp.write_text(json.dumps(entry), encoding="utf-8")
            os.replace(tmp, self.file)
            if _SUPERVISOR and _ANNOUNCED[-1:] != [self.file]:
                _announce(self.file)
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
                if self.run_dir is not None:
                    self._scan()
            except Exception:  # noqa: BLE001 - the watchdog never brings a run down by itself
                pass

    def _interval(self) -> float:
        return max(0.02, min(0.25, self.timeout / 20))

    def _look(self, current: dict) -> None:
        """One look at this process's chunk: heartbeat, and the decision it is in."""
        if self.file is not None:
            try:
                os.utime(self.file)
            except OSError:
                pass
        if current["compiled"] or current["state"] != "playing":
            self._key = None
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
            with self._lock:
                if self.current is not None and self.current.get("state") == "playing":
                    why = (f"agent {p.agent!r} (seat {p.seat}) did not decide within {self.timeout:g} s and could not "
                           f"be stopped where it is (in compiled or C code) at seed {p.seed}")
                    self.current = {**self.current, "state": "stuck", "why": why}
                    self._write()
                    if self.run_dir is not None and not _SUPERVISOR:
                        self.note(f"{why}: this process cannot stop it; kill it (the kc-sim command stops it itself)")

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
        if self.run_dir is not None:
            self._tell_slow(os.getpid(), p.agent, s)
        else:
            with self._lock:
                self._write()

    def _tell_slow(self, pid: int, agent: str, s: dict) -> None:
        key = ("told", agent)                  # an agent is named at most every SLOW_EVERY seconds, in any process
        now = time.monotonic()
        if key in self.told and now - self.told[key] < SLOW_EVERY:
            return
        self.told[key] = now
        more = f" ({s['n']} decisions over {min(SLOW_AFTER, self.timeout / 4):g} s so far, the longest " \
               f"{s['longest']:.1f} s)" if s["n"] > 1 else ""
        self.note(f"agent {agent!r} (seat {s['seat']}) is slow: a decision took {s['last']:.1f} s{more}; the run "
                  f"goes on, and stops at a decision over {self.timeout:g} s (--decision-timeout)")

    # --- the parent: the other processes ----------------------------------------------

    def _scan(self) -> None:
        """Read the workers' watch files: tell their slow agents, kill a stuck one."""
        now = _WALL()
        for path in sorted(self.run_dir.glob("*.json")):
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
                    self._tell_slow(pid, agent, s)
            why = stuck_reason(entry, beat, now)
            if why is not None and self.verdict is None and _ours(entry):
                self.verdict = (entry, why)
                kill(pid)

    def check(self) -> str | None:
        """What the waiting parent should stop for: a worker found stuck (and killed)."""
        if self.verdict is None:
            return None
        entry, why = self.verdict
        return f"worker {entry.get('pid')} was stopped: {why}"


def _ours(entry: dict) -> bool:
    """Is the process of a watch file a child of this one, on this machine (one we may kill)?"""
    if entry.get("host") != socket.gethostname():
        return False
    try:
        stat = Path(f"/proc/{int(entry['pid'])}/stat").read_text()
        return int(stat.rsplit(")", 1)[1].split()[1]) == os.getpid()
    except (OSError, ValueError, KeyError, IndexError):
        return False


def kill(pid: int) -> None:
    try:
        os.kill(int(pid), signal.SIGKILL)
    except (OSError, ValueError):
        pass


def _stderr(message: str) -> None:
    print(f"kc-sim: {message}", file=sys.stderr, flush=True)


_DOGS: list = []
_LISTENING: list = []


def _listen_to_compiles(dog: Watchdog) -> None:
    """Tell ``dog`` when numba starts and ends compiling in this process (once per process)."""
    if _LISTENING:
        return
    from numba.core import event  # lazy: numba is loaded by whoever plays a chunk anyway

    class Compiles(event.Listener):
        depth = 0

        def on_start(self, ev):
            self.depth += 1
            if self.depth == 1:
                dog.compiling(True)

        def on_end(self, ev):
            self.depth -= 1
            if self.depth == 0:
                dog.compiling(False)

    listener = Compiles()
    event.register("numba:compile", listener)
    _LISTENING.append(listener)


def _dog() -> Watchdog:
    """This process's watchdog (its thread started on first use)."""
    if not _DOGS:
        _DOGS.append(Watchdog())
    return _DOGS[0]


@contextmanager
def playing(task, compiled: bool, units: int):
    """Watch the chunk ``task`` while the calling thread plays it (``units`` rounds or
    matches; ``compiled``: every agent is a compiled policy)."""
    dog = _dog()
    dog.begin(task, compiled, units)
    t0 = time.perf_counter()
    ok = False
    try:
        yield dog
        ok = True
    finally:
        dog.end(task, compiled and ok, units, time.perf_counter() - t0)


@contextmanager
def watching_run(watch_dir: Path):
    """In the parent of a run, while it runs: also watch the other playing processes
    through their watch files in ``watch_dir``, and tell slow decisions (``dog.note``:
    a progress line, on stderr by default)."""
    dog = _dog()
    dog.verdict, dog.told = None, {}
    dog.note = _stderr
    dog.run_dir = Path(watch_dir).resolve()
    try:
        yield dog
    finally:
        dog.run_dir = None
        dog.note = _stderr


# --- the supervisor's end (kc_sim.tournament.supervise) -----------------------------------
#: set in the supervised process: the pipe on which it tells the supervisor its watch file
_SUPERVISOR: list = []
_ANNOUNCED: list = []


def _announce(path: Path) -> None:
    """Tell the supervisor where this process's watch file is (once)."""
    _ANNOUNCED.append(path)
    try:
        os.write(_SUPERVISOR[0], f"watch {path}\n".encode())
    except OSError:
        pass


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{int(pid)}/stat").read_text()
        return stat.rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, ValueError, IndexError):
        try:
            os.kill(int(pid), 0)
        except (OSError, ValueError):
            return False
        return True


def dead_players(watch_dir) -> list[dict]:
    """The processes of this machine that died while playing a chunk (their watch files
    say ``playing``): ``pid``, ``chunk`` (-1: the warm-up), ``agents``."""
    out = []
    for path in sorted(Path(watch_dir).glob("*.json")):
        got = read_watch(path)
        if got is None:
            continue
        entry = got[0]
        if entry.get("state") in ("playing", "stuck") and entry.get("host") == socket.gethostname() \
                and not _alive(entry.get("pid", -1)):
            out.append({"pid": entry.get("pid"), "chunk": int(entry.get("chunk", -1)),
                        "agents": [str(a) for a in entry.get("agents", [])]})
    return out
