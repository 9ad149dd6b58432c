"""Seeing a Python agent's decision take too long, and stopping it, at no cost per decision.

The Python loop (:class:`kc_sim.play.driver.python_loop.PythonLoop`) is watched from another
thread, a few times a second (:func:`pending_decision`): the loop the playing thread is
playing a round in - each loop registers the round it plays, and its seed, with this
process's :class:`RoundsInPlay` (once per round: a dictionary entry set and removed) - and
that loop's round state - turns, actions, the event log's length - which changes at every
decision. Nothing is added per decision: no counter, no clock, no system call.

A decision that has left the state unchanged past its limit is stopped by raising
:class:`AgentStalled` in the playing thread (:func:`stop_decision`, CPython's
``PyThreadState_SetAsyncExc``). It comes out of the agent's ``act`` as if the agent had
raised it, so the seat driver turns it into a ``stalled`` :class:`~kc_sim.play.driver.faults.SeatFault`
and the runner into an :class:`~kc_sim.play.driver.faults.AgentFault` with the round's game
record saved - the path of any agent that raises. An exception is raised only where Python
code runs: a decision stuck in compiled or C code (a numba loop, a call that never returns)
keeps the state unchanged after it; the caller sees that and has the process killed from
outside (see :mod:`kc_sim.processes.watch`).
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import threading
from dataclasses import dataclass

import numpy as np

from kc_sim.core import layout
from kc_sim.core.rows import C_ACTIONS
from kc_sim.errors import UserError

__all__ = ["AgentStalled", "BlocksInPlay", "Pending", "RoundsInPlay", "blocks_in_play", "compiled_progress",
           "pending_decision", "rounds_in_play", "stop_decision"]


class AgentStalled(UserError):
    """Raised in the playing thread when a decision passed its time limit. Raised as a
    class made for the occasion (the interpreter raises a class, with no arguments), whose
    attributes say who stalled and for how long; it pickles as a plain UserError."""

    agent: str | None = None
    seat: int = -1
    seed: int | None = None
    limit: float = 0.0
    elapsed: float = 0.0

    def __init__(self, *args):
        super().__init__(*(args or (self.describe(),)))

    @classmethod
    def what(cls) -> str:
        """``did not decide within 60 s (stopped after 60.2 s)``"""
        return f"did not decide within {cls.limit:g} s (stopped after {cls.elapsed:.1f} s; --decision-timeout)"

    @classmethod
    def describe(cls) -> str:
        return f"agent {cls.agent!r} (seat {cls.seat}) {cls.what()} at seed {cls.seed}"

    def __reduce__(self):
        return UserError, (str(self),)


@dataclass(frozen=True)
class Pending:
    """A decision the playing thread is in: ``key`` changes at every decision."""

    key: tuple
    agent: str | None
    seat: int
    seed: int | None


class RoundsInPlay:
    """Which Python loop each thread is playing a round in, and the round's seed:
    :attr:`by_thread` maps a thread id to ``(loop, seed)``. The loop sets its entry as it
    starts a round and removes it as the round ends, however it ends (inline in
    :meth:`kc_sim.play.driver.python_loop.PythonLoop.play`: a dictionary entry, the cheapest
    registration there is, once per round); the watchdog reads it from its own thread
    (:meth:`get`). A round played inside another's decision (an agent that plays a game
    itself) is set over the outer round's entry, which it puts back as it ends."""

    def __init__(self):
        self.by_thread: dict[int, tuple] = {}

    def get(self, thread_id: int) -> tuple | None:
        """``(loop, seed)`` of the round thread ``thread_id`` is playing, or None."""
        return self.by_thread.get(thread_id)


@functools.cache
def rounds_in_play() -> RoundsInPlay:
    """This process's rounds in play (one registry, made on first use)."""
    return RoundsInPlay()


class BlocksInPlay:
    """The block of rounds each thread is playing in the compiled loop: :attr:`by_thread`
    maps a thread id to the int64 rows the loop fills, a round at a time. The runner sets the
    entry around each call of the loop (:meth:`playing`); the watchdog reads, from its own
    thread, how many rows are filled (:func:`compiled_progress`): the loop releases the
    interpreter, so a chunk of compiled agents is watched by its rounds finishing, whatever
    its agents' speed, and nothing is added to the loop."""

    def __init__(self):
        self.by_thread: dict[int, tuple] = {}

    @contextlib.contextmanager
    def playing(self, rows: np.ndarray):
        """Register ``rows`` (the loop's output, zeros until a round is written) for this thread."""
        me = threading.get_ident()
        before = self.by_thread.get(me)
        self.by_thread[me] = (rows,)
        try:
            yield
        finally:
            if before is None:
                self.by_thread.pop(me, None)
            else:
                self.by_thread[me] = before


@functools.cache
def blocks_in_play() -> BlocksInPlay:
    """This process's compiled blocks in play (one registry, made on first use)."""
    return BlocksInPlay()


def compiled_progress(thread_id: int) -> tuple | None:
    """A key that changes whenever thread ``thread_id``'s compiled loop finishes a round
    (None if it is not in one): the block, and how many of its rows are written (a written
    row has at least one action: every round has one)."""
    got = blocks_in_play().by_thread.get(thread_id)
    if got is None:
        return None
    rows = got[0]
    return id(rows), int(np.count_nonzero(rows[:, C_ACTIONS]))


def pending_decision(thread_id: int) -> Pending | None:
    """The decision thread ``thread_id`` is in, if it is playing a round of the Python loop
    (else None: between rounds, in the compiled loop, not playing)."""
    got = rounds_in_play().get(thread_id)
    if got is None:
        return None
    loop, seed = got
    try:
        st, log, agents = loop.st, loop.log, loop.agents
        seat = int(st[layout.SEAT])
        key = (id(loop), seed, int(st[layout.TURNS]), int(st[layout.ACTIONS]), int(st[layout.DONE]), int(log[0]))
        agent = agents.name(seat) if seat < len(agents.seat_map) else None
    except (AttributeError, IndexError, TypeError):     # the round is just starting or ending
        return None
    return Pending(key, agent, seat, seed)


def stop_decision(thread_id: int, pending: Pending, limit: float, elapsed: float) -> bool:
    """Raise :class:`AgentStalled` in thread ``thread_id`` (at its next Python
    instruction); False if there is no such thread."""
    stalled = type("AgentStalled", (AgentStalled,), {"agent": pending.agent, "seat": pending.seat,
                                                     "seed": pending.seed, "limit": limit, "elapsed": elapsed})
    n = ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread_id), ctypes.py_object(stalled))
    return n == 1
