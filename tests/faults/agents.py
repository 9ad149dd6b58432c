"""Agents that misbehave on purpose, for the fault-injection tests (tests/faults).

Each plays legally (the first legal action) until its fault. The fault never comes in the
warm-up (a run plays one deal to compile before anything else), so it happens in a chunk
of the run: at the agent's sixth decision of the second round its instance plays (an
instance plays one round per seating in the warm-up). The ``...W`` agents fault only in a
worker process (loky or dask, or the child that replays a chunk), never in the ``kc-sim``
process itself. A compiled policy that stalls is in ``compiled_agents.py``."""

from __future__ import annotations

import multiprocessing
import os
import time

from kc_sim.play.agents.interface import PythonAgent

FAULT_DECISION = 6


def in_worker() -> bool:
    """In a loky or dask worker process (not the process that runs the command)?"""
    return multiprocessing.current_process().name != "MainProcess"


class _Faulty(PythonAgent):
    workers_only = False
    rounds = 0                      # rounds this instance played

    def new_round(self, seat, players, rules, seed):
        super().new_round(seat, players, rules, seed)
        self.rounds, self.decisions = self.rounds + 1, 0

    def act(self, obs):
        self.decisions += 1
        if self.rounds >= 2 and self.decisions >= FAULT_DECISION and (in_worker() or not self.workers_only):
            self.fault()
        return obs.legal[0]

    def fault(self):
        raise NotImplementedError


class Spin(_Faulty):
    """Never returns from a decision: a Python loop (the watchdog stops it in the process)."""

    def fault(self):
        while True:
            pass


class SpinW(Spin):
    workers_only = True


class Sleep(_Faulty):
    """Never returns from a decision: a call Python cannot interrupt (the process is killed)."""

    def fault(self):
        time.sleep(10 ** 6)


class SleepW(Sleep):
    workers_only = True


class Exit(_Faulty):
    """Ends its process in the middle of a round, without a word."""

    def fault(self):
        os._exit(1)


class ExitW(Exit):
    workers_only = True


_SLEPT: list = []


class Slow(PythonAgent):
    """Works, but its first decision in a process takes 1.5 s."""

    def act(self, obs):
        if not _SLEPT:
            _SLEPT.append(True)
            time.sleep(1.5)
        return obs.legal[0]


_OPENED: list = []


class Gate(PythonAgent):
    """Waits at its first decision in a process until the file named by ``KC_TEST_GATE``
    exists (a run that holds its folder until the test lets it go)."""

    def act(self, obs):
        if not _OPENED:
            gate = os.environ.get("KC_TEST_GATE")
            while gate and not os.path.exists(gate):
                time.sleep(0.05)
            _OPENED.append(True)
        return obs.legal[0]


class BrokenInit(PythonAgent):
    """Its constructor raises."""

    workers_only = False

    def __init__(self, seed: int = 0):
        if in_worker() or not self.workers_only:
            raise RuntimeError("no model file here")
        super().__init__(seed)

    def act(self, obs):
        return obs.legal[0]


class BrokenInitW(BrokenInit):
    workers_only = True
