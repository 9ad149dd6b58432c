"""The round a stuck process was playing, found again: its chunk replayed decision by decision.

A process stuck in compiled or C code (a compiled policy that never returns, an agent in a
call that never ends) cannot say where it is, and is killed from outside
(:mod:`kc_sim.processes.watch`). :func:`stalled` then replays its chunk in a child
process (:func:`kc_sim.processes.rederive.run_watched`: the generic part, a child sharing
an int64 block with this one, watched for progress and killed past a limit), through the
Python loop (:mod:`kc_sim.play.driver.python_loop`: compiled seats too are called one decision at
a time), with the round state and event log of every loop kept in the shared block, and
the seed, round and seat map of the round in play beside them (this module: the
chunk-specific part). The child stops a Python-level stall itself (its own watchdog: the
usual fault, with the round's record). When a decision leaves the shared state unchanged
past the limit, this process kills the child and reads the state it left: the seed, the
round, the seat to act and its agent, the turns so far - and saves the round's game record
like any fault's.

Run as ``python -m kc_sim.tournament.rederive SHARED RESULT`` for the child's side (:func:`_child`).
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
from dataclasses import replace

from kc_sim.core import layout
from kc_sim.errors import UserError
from kc_sim.processes.rederive import READY, child_end, run_watched
from kc_sim.processes.watchfile import DEFAULT_DECISION_TIMEOUT
from kc_sim.tournament.worker import ChunkTask

__all__ = ["stalled"]

# the shared block: a header of int64 words (the first is processes.rederive's READY, set by the
# child once it has started), then
# the loop's memory block (state | log | ...)
H_LOOPS, H_MATCHES, H_ROUND, H_SEED, H_K, H_DEALER, H_MAP = range(READY + 1, READY + 8)
HEADER = H_MAP + layout.MAX_SEATS


def _who(entry: dict) -> str:
    where = "this process" if entry.get("pid") == os.getpid() else f"process {entry.get('pid')}"
    what = "the warm-up" if int(entry.get("chunk", 0)) < 0 else f"chunk {entry.get('chunk')}"
    return f"{where} playing {what} (agents {', '.join(map(str, entry.get('agents', [])))})"


def stalled(entry: dict, why: str) -> UserError:
    """The error to end a run with, for the process of watch file ``entry`` found stuck
    (``why``) and killed: the AgentFault of the round it stalled in (its record saved),
    found by replaying its chunk (:func:`replay`), or what is known if that fails."""
    try:
        task = ChunkTask.from_json(entry["task"])
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
    from kc_sim.play.driver import python_loop  # lazy: this process only needs it once a stall is found

    task = replace(task, engine="python", setup=replace(task.setup, watch_dir=None, decision_timeout=limit))
    try:
        out = run_watched("kc_sim.tournament.rederive", task.to_json(), HEADER + python_loop.BLOCK_SIZE, _progress,
                          limit)
    except OSError as e:
        return UserError(f"cannot replay chunk {task.index} to find where it stalled: {e}")
    if out.block is not None:
        return _fault_at(task, out.block, limit, out.waited)
    try:
        return pickle.loads(out.result) if out.result is not None else None
    except (pickle.UnpicklingError, EOFError):
        return None


def _progress(view) -> tuple:
    """What changes at every decision of the child: loop, match, round, turns, actions, log length."""
    from kc_sim.play.driver.python_loop import B_LOG
    b = view[HEADER:]
    return (int(view[H_LOOPS]), int(view[H_MATCHES]), int(view[H_ROUND]), int(b[layout.TURNS]),
            int(b[layout.ACTIONS]), int(b[layout.DONE]), int(b[B_LOG]))


def _fault_at(task: ChunkTask, view, limit: float, waited: float) -> UserError:
    """The AgentFault of the decision the killed child was stuck in, from the shared state."""
    from kc_sim.game.rules import parse_rules
    from kc_sim.play.driver.python_loop import BLOCK_SIZE, PythonLoop
    from kc_sim.play.agents.registry import load_agent
    from kc_sim.play.driver.seat import SeatFault
    from kc_sim.tournament.schedule import group_seeds, seat_lineup

    q, m, r = int(view[H_LOOPS]) - 1, int(view[H_MATCHES]) - 1, int(view[H_ROUND])
    seed, k, dealer = int(view[H_SEED]), int(view[H_K]), int(view[H_DEALER])
    seat_map = [int(x) for x in view[H_MAP:H_MAP + k]]
    seated = list(seat_lineup([load_agent(n) for n in task.names], task.seating_list()[q]))
    loop = PythonLoop(seated, parse_rules(task.setup.rules), task.setup.fault_dir)
    loop.block[:] = view[HEADER:HEADER + BLOCK_SIZE]           # the state and log the child left
    seat = int(loop.st[layout.SEAT])
    f = SeatFault(seated[seat_map[seat]].name, seat, "stalled",
                  f"did not decide within {limit:g} s (stuck {waited:.0f} s in compiled or C code, where it "
                  "cannot be interrupted: its process was killed; --decision-timeout)")
    if task.mode == "rounds":
        return loop.fault(f, seed, k, dealer, seat_map, match=None, round=r)
    match_seed = int(group_seeds(task.setup.seed, task.start, task.stop)[m])
    return loop.fault(f, seed, k, dealer, seat_map, match=m, round=r, match_seed=match_seed)


# --- the child ------------------------------------------------------------------------------

def _shared_loop(view):
    """A PythonLoop whose memory block lives in ``view`` (the shared file) and which writes
    the round it plays into the header."""
    from kc_sim.play.driver import python_loop

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
            view[H_MATCHES], view[H_ROUND], view[READY] = 0, -1, 1

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
    """Replay the chunk given on stdin with the loops' state in the shared block (every loop
    of this process shares it: the loop class is passed down to the runner); write the fault
    it stops at (pickled) as the result."""
    from kc_sim.tournament.worker import run_chunk

    with child_end() as end:
        multiprocessing.current_process().name = "kc-sim replay"   # (it plays what a worker played)
        task = ChunkTask.from_json(end.payload)
        try:
            run_chunk(task, _loop_class=_shared_loop(end.block))
            found = None
        except UserError as e:
            found = e
        end.write_result(pickle.dumps(found))


if __name__ == "__main__":
    _child()
