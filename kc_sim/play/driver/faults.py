"""Agent faults: an agent raised, returned something that is not an action, played an
illegal action or never ended its round. The run stops with one :class:`AgentFault` line
naming the agent, seed, round, turn and action, after saving that round's game record
(JSON Lines) to ``fault_dir`` (default ``kc-sim-faults/`` in the current directory).

The compiled loop only reports which round went wrong (or raises, when a policy raises);
:func:`first_failing` finds the first failing item of a batch by bisection, the caller
replays it through the Python loop, which raises the AgentFault with its record, and
:func:`unreproduced` is the fault to give when the replay plays without fault (a
nondeterministic policy).
"""

from __future__ import annotations

from pathlib import Path

from kc_sim.core import layout, loop
from kc_sim.errors import UserError
from kc_sim.game.actions import action_text
from kc_sim.records.format import write_records

__all__ = ["AgentFault", "SeatFault", "DEFAULT_FAULT_DIR", "agent_fault", "hook_fault", "first_failing", "raises",
           "unreproduced"]

DEFAULT_FAULT_DIR = "kc-sim-faults"


class AgentFault(UserError):
    """An agent broke the contract (raised, returned something that is not an action, or
    an illegal action). The message is one line; ``path`` is the saved game record."""

    def __init__(self, message: str, *, agent: str, seat: int, seed: int, match: int | None, round: int,
                 turn: int, action: str | None, path: Path | None):
        super().__init__(message)
        self.agent, self.seat, self.seed, self.match, self.round = agent, seat, seed, match, round
        self.turn, self.action, self.path = turn, action, path

    def __reduce__(self):
        """Keep the type and fields when a worker process sends the fault back."""
        fields = {k: getattr(self, k) for k in ("agent", "seat", "seed", "match", "round", "turn", "action", "path")}
        return _rebuild_fault, (str(self), fields)


class SeatFault(UserError):
    """An agent broke the contract at a seat: ``kind`` is ``raised``, ``not an action``,
    ``illegal``, ``too long`` or ``stalled`` (a decision past its time limit); ``what`` says what it did (``raised KeyError: ...``).
    ``seat`` is the round seat (the match seat for a ``new_match`` hook); ``action`` the
    offending action's text, if any. The message names the agent."""

    def __init__(self, agent: str, seat: int, kind: str, what: str, action: str | None = None, *,
                 hook: str | None = None):
        super().__init__(f"agent {agent!r} (seat {seat}) {what}")
        self.agent, self.seat, self.kind, self.what, self.action, self.hook = agent, seat, kind, what, action, hook


def _rebuild_fault(message: str, fields: dict) -> AgentFault:
    return AgentFault(message, **fields)


def hook_fault(f: SeatFault) -> AgentFault:
    """The AgentFault of an agent whose ``new_match`` hook raised (no round to save)."""
    return AgentFault(str(f), agent=f.agent, seat=f.seat, seed=-1, match=None, round=-1, turn=-1, action=None,
                      path=None)


def agent_fault(f: SeatFault, record: dict, fault_dir, *, seed: int, turn: int, match: int | None, round: int,
                match_seed: int | None = None) -> AgentFault:
    """Save the faulty round's ``record`` (with a ``fault`` field) to ``fault_dir`` and build
    the one-line AgentFault. ``seed`` is the round seed; a round of a match also names the
    match and its seed."""
    record["fault"] = {"agent": f.agent, "seat": f.seat, "kind": f.kind, "turn": turn, "action": f.action,
                       "message": f.what}
    if match is None:
        where = f"seed {seed}, round {round}, turn {turn}"
        fname = f"fault-seed{seed}-round{round}.jsonl"
    else:
        where = f"match seed {match_seed}, match {match}, round {round} (round seed {seed}), turn {turn}"
        fname = f"fault-match{match}-seed{match_seed}-round{round}.jsonl"
    path = Path(DEFAULT_FAULT_DIR if fault_dir is None else fault_dir) / fname
    saved = f"game record saved to {path}"
    try:
        write_records(path, [record])
    except OSError as e:
        path, saved = None, f"could not save the game record ({e})"
    return AgentFault(f"agent {f.agent!r} (seat {f.seat}) {f.what} at {where}; {saved}",
                      agent=f.agent, seat=f.seat, seed=seed if match is None else match_seed, match=match,
                      round=round, turn=turn, action=f.action, path=path)


def first_failing(run, n: int) -> int:
    """Index of the first item whose batch raises, by bisection (``run(lo, hi)`` True when it raises)."""
    lo, hi = 0, n
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if run(lo, mid):
            hi = mid
        else:
            lo = mid
    return lo


def raises(fn) -> bool:
    """Does ``fn()`` raise?"""
    try:
        fn()
    except Exception:
        return True
    return False


def unreproduced(specs, seed, row) -> AgentFault:
    """A compiled-loop fault that the Python replay did not reproduce (a nondeterministic
    policy); ``row`` is the round row the compiled loop wrote, None when a policy raised."""
    if row is None:
        return AgentFault(f"a compiled policy raised in the compiled loop at seed {seed}, but a replay played "
                          "without fault (is the policy deterministic?)", agent="?", seat=-1, seed=seed, match=None,
                          round=-1, turn=-1, action=None, path=None)
    seat = int(row[loop.C_BAD_SEAT])
    name = specs[seat].name if 0 <= seat < len(specs) else "?"
    act = int(row[loop.C_BAD_ACTION])
    text = action_text(act) if 0 <= act < layout.N_ACTIONS else str(act)
    turn = int(row[loop.C_TURNS]) - 1
    return AgentFault(f"agent {name!r} (seat {seat}) stopped the compiled loop (status {int(row[loop.C_STATUS])}, "
                      f"action {text}) at seed {seed}, turn {turn}, but a replay played the round without fault "
                      "(is the policy deterministic?)", agent=name, seat=seat, seed=seed, match=None,
                      round=int(row[loop.C_MATCH_ROUND]), turn=turn, action=text, path=None)
