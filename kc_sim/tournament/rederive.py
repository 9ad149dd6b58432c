"""The round a stuck process was playing, found again: its chunk replayed decision by decision.

A process stuck in compiled or C code (a compiled policy that never returns, an agent in a
call that never ends) cannot say where it is, and is killed from outside
(:mod:`kc_sim.tournament.watch`). :func:`stalled` then replays its chunk in a child
process, through the Python loop (:mod:`kc_sim.play.python_loop`: compiled seats too are
called one decision at a time), with the round state and event log of every loop kept in
a file both processes map, and the seed, round and seat map of the round in play beside
them. The child stops a Python-level stall itself (its own watchdog: the usual fault, with
the round's record). When a decision leaves the shared state unchanged past the limit,
this process kills the child and reads the state it left: the seed, the round, the seat to
act and its agent, the turns so far - and saves the round's game record like any fault's.

Run as ``python -m kc_sim.tournament.rederive SHARED`` for the child's side (:func:`_child`).
"""

from __future__ import annotations

import json
import mmap
import multiprocessing
import os
import pickle
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, replace
from pathlib import Path

import numpy as np

from kc_sim.core import layout
from kc_sim.errors import UserError
from kc_sim.tournament.watch import GRACE, DEFAULT_DECISION_TIMEOUT
from kc_sim.tournament.worker import ChunkTask

__all__ = ["stalled"]

# the shared file: a header of int64 words, then the loop's memory block (state | log | ...)
H_READY, H_LOOPS, H_MATCHES, H_ROUND, H_SEED, H_K, H_DEALER, H_MAP = range(8)
HEADER = H_MAP + layout.MAX_SEATS
#: seconds the child may take to start (import, load the agents and the compiled code)
START_LIMIT = 120.0


def _task(d: dict) -> ChunkTask:
    d = dict(d)
    for k in ("names", "agents", "loop_names"):
        d[k] = tuple(d.get(k) or ())
    d["seatings"] = tuple(tuple(x) for x in d.get("seatings") or ())
    return ChunkTask(**d)


def _who(entry: dict) -> str:
    where = "this process" if entry.get("pid") == os.getpid() else f"process {entry.get('pid')}"
    what = "the warm-up" if int(entry.get("chunk", 0)) < 0 else f"chunk {entry.get('chunk')}"
    return f"{where} playing {what} (agents {', '.join(map(str, entry.get('agents', [])))})"


def stalled(entry: dict, why: str) -> UserError:
    """The error to end a run with, for the process of watch file ``entry`` found stuck
    (``why``) and killed: the AgentFault of the round it stalled in (its record saved),
    found by replaying its chunk (:func:`replay`), or what is known if that fails."""
    try:
        task = _task(entry["task"])
    except (KeyError, TypeError, ValueError):
        return UserError(f"{_who(entry)} was stopped: {why}; finished chunks are kept: rerun the same command "
                         "to resume")
    limit = float(entry.get("timeout") or DEFAULT_DECISION_TIMEOUT)
    found = replay(task, limit)
    if found is None:
        return UserError(f"{_who(entry)} was stopped: {why}; a replay of that chunk played through without a "
                         "stall (is an agent nondeterministic, or was the machine overloaded?); finished chunks "
                         "are kept: rerun the same command to resume")
    return found


def replay(task: ChunkTask, limit: float) -> UserError | None:
    """Replay chunk ``task`` in a child process, decision by decision; the fault it stops
    at (an AgentFault, its record saved), or None if it plays through."""
    from kc_sim.play import python_loop  # lazy: this process only needs it once a stall is found

    task = replace(task, engine="python", watch_dir=None, decision_timeout=limit)
    size = 8 * (HEADER + python_loop.BLOCK_SIZE)
    with tempfile.TemporaryDirectory(prefix="kc-sim-replay-") as tmp:
        shared, result = Path(tmp) / "shared", Path(tmp) / "result"
        shared.write_bytes(bytes(size))
        try:
            proc = subprocess.Popen([sys.executable, "-m", "kc_sim.tournament.rederive", str(shared), str(result)],
                                    stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        except OSError as e:
            return UserError(f"cannot replay chunk {task.index} to find where it stalled: {e}")
        with proc:
            proc.stdin.write(json.dumps({"task": asdict(task), "parent": os.getpid()}).encode())
            proc.stdin.close()
            stuck = _watch_child(proc, shared, limit)
            if stuck is not None:
                proc.kill()
                proc.wait()
                view, waited = stuck
                return _fault_at(task, view, limit, waited)
        try:
            return pickle.loads(result.read_bytes()) if result.exists() else None
        except (OSError, pickle.UnpicklingError, EOFError):
            return None


def _progress(view) -> tuple:
    """What changes at every decision of the child: loop, match, round, turns, actions, log length."""
    from kc_sim.play.python_loop import B_LOG
    b = view[HEADER:]
    return (int(view[H_LOOPS]), int(view[H_MATCHES]), int(view[H_ROUND]), int(b[layout.TURNS]),
            int(b[layout.ACTIONS]), int(b[layout.DONE]), int(b[B_LOG]))


def _watch_child(proc, shared: Path, limit: float):
    """Wait for the child; once a decision has been stuck past ``limit``, the shared state
    (a copy) and the seconds it was stuck (the child is then to be killed); None when the
    child ended."""
    t0 = time.monotonic()
    key, since = None, t0
    while proc.poll() is None:
        time.sleep(0.05)
        now = time.monotonic()
        view = np.fromfile(shared, dtype=np.int64)     # what the child's loop wrote last (the file's pages)
        if not view[H_READY]:
            if now - t0 > START_LIMIT:
                return None
            continue
        k = _progress(view)
        if k != key:
            key, since = k, now
        elif now - since > limit + GRACE:        # (the child stops a Python-level stall itself within the limit)
            return view, now - since
    return None


def _fault_at(task: ChunkTask, view, limit: float, waited: float) -> UserError:
    """The AgentFault of the decision the killed child was stuck in, from the shared state."""
    from kc_sim.game.rules import parse_rules
    from kc_sim.play.python_loop import BLOCK_SIZE, PythonLoop
    from kc_sim.play.registry import load_agent
    from kc_sim.play.seat import SeatFault
    from kc_sim.tournament.schedule import group_seeds, seat_lineup

    q, m, r = int(view[H_LOOPS]) - 1, int(view[H_MATCHES]) - 1, int(view[H_ROUND])
    seed, k, dealer = int(view[H_SEED]), int(view[H_K]), int(view[H_DEALER])
    seat_map = [int(x) for x in view[H_MAP:H_MAP + k]]
    seated = list(seat_lineup([load_agent(n) for n in task.names], task.seating_list()[q]))
    loop = PythonLoop(seated, parse_rules(task.rules), task.fault_dir)
    loop.block[:] = view[HEADER:HEADER + BLOCK_SIZE]           # the state and log the child left
    seat = int(loop.st[layout.SEAT])
    f = SeatFault(seated[seat_map[seat]].name, seat, "stalled",
                  f"did not decide within {limit:g} s (stuck {waited:.0f} s in compiled or C code, where it "
                  "cannot be interrupted: its process was killed; --decision-timeout)")
    if task.mode == "rounds":
        return loop.fault(f, seed, k, dealer, seat_map, match=None, round=r)
    match_seed = int(group_seeds(task.seed, task.start, task.stop)[m])
    return loop.fault(f, seed, k, dealer, seat_map, match=m, round=r, match_seed=match_seed)


# --- the child ------------------------------------------------------------------------------

def _shared_loop(view):
    """A PythonLoop whose memory block lives in ``view`` (the shared file) and which writes
    the round it plays into the header."""
    from kc_sim.play import python_loop

    class SharedLoop(python_loop.PythonLoop):
        def __init__(self, specs, rules, fault_dir=None):
            super().__init__(specs, rules, fault_dir)
            block = view[HEADER:HEADER + python_loop.BLOCK_SIZE]
            block[:] = self.block
            self.block, self.addr = block, block.ctypes.data
            self.st = block[:layout.STATE_SIZE]
            self.log = block[python_loop.B_LOG:python_loop.B_LOG + python_loop.LOG_SIZE]
            self._seated = None
            view[H_LOOPS] += 1
            view[H_MATCHES], view[H_ROUND], view[H_READY] = 0, -1, 1

        def new_match(self):
            view[H_MATCHES] += 1
            view[H_ROUND] = -1
            super().new_match()

        def play(self, seed, k, dealer, seat_map, scores):
            view[H_ROUND] += 1
            view[H_SEED], view[H_K], view[H_DEALER] = seed, k, dealer
            view[H_MAP:H_MAP + k] = seat_map
            super().play(seed, k, dealer, seat_map, scores)

    return SharedLoop


def _child() -> None:
    """Replay the chunk read from stdin with the loops' state in the shared file; write the
    fault it stops at (pickled) to the result file."""
    from kc_sim.play import runner
    from kc_sim.tournament.lifeline import die_with_parent
    from kc_sim.tournament.worker import run_chunk

    shared, result = sys.argv[1], sys.argv[2]
    args = json.loads(sys.stdin.read())
    die_with_parent(args["parent"])
    multiprocessing.current_process().name = "kc-sim replay"   # (it plays what a worker played)
    task = _task(args["task"])
    with open(shared, "r+b") as f, mmap.mmap(f.fileno(), 0) as mm:
        view = np.frombuffer(mm, dtype=np.int64)
        runner.PythonLoop = _shared_loop(view)        # this process only replays: every loop shares its state
        try:
            run_chunk(task)
            found = None
        except UserError as e:
            found = e
        Path(result).write_bytes(pickle.dumps(found))
        del view


if __name__ == "__main__":
    _child()
