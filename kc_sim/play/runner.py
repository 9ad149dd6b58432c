"""Playing rounds and matches between agents: the compiled loop when every seat is a
compiled policy, the Python loop (:mod:`kc_sim.play.python_loop`) otherwise. Both write
the same round rows (``kc_sim.core.loop``'s ``C_*`` columns) and match rows (``M_*``
columns), and give identical results for the same agents and seeds.

* :func:`play_rounds` - one independent round per seed (dealer drawn from the seed).
* :func:`play_matches` - one match per seed under ``rules.match``.
* :func:`record_round`, :func:`record_row` - the game record of one round, any agent mix
  (:mod:`kc_sim.play.recorded`; re-exported here).
* :class:`AgentFault` - a misbehaving agent stops the run with one line, after its round's
  game record is saved (:mod:`kc_sim.play.faults`; re-exported here).

A fault in the compiled loop is found (by bisection when a policy raises) and the round
replayed through the Python loop, which raises the AgentFault with the round's record.

**Which compiled loop.** The generic loop (``kc_sim.core.loop``) calls policies through
function pointers and serves every agent. When every seat is a policy known at load time
(``kc_sim.core.specialise``: the built-ins and policies loaded by name), a loop compiled
for that set of policies, with their calls inlined, plays the same rounds faster (1.3x for
greedy self-play). Compiling one takes a few seconds, so with ``SPECIALISE = "auto"`` (the
default) it is used only when it pays:

* once compiled in this process, always;
* when compiled before on this machine (numba's cache, about 20 ms to load), as soon as
  this process has this set of policies play ``LOAD_AFTER_ROUNDS`` rounds (this call included);
* otherwise it is compiled once the generic loop has spent ``COMPILE_AFTER_S`` CPU-seconds on
  this set at under ``CHEAP_NS`` per decision (costly policies gain almost nothing from the
  inlining), counted over every process and run on this machine: each process adds its
  generic-loop time to a small file beside the loop's source in the cache (``.played``),
  so a series of 1M-round commands gets there as surely as one long run; every later run
  then loads it from the cache.

``"always"`` and ``"never"`` force the choice (tests, benchmarks); the environment variable
``KC_SIM_SPECIALISE`` sets it for a whole run, worker processes included.
"""

from __future__ import annotations

import os
import time

import numpy as np

from kc_sim.core import layout, loop, specialise
from kc_sim.core import match as match_rule
from kc_sim.errors import UserError
from kc_sim.game.rules import RuleSet, parse_rules
from kc_sim.play.faults import (
    DEFAULT_FAULT_DIR,
    AgentFault,
    first_failing,
    raises,
    unreproduced,
)
from kc_sim.play.match import MATCH_KINDS, Match
from kc_sim.play.python_loop import PythonLoop, write_row
from kc_sim.play.registry import load_agents
from kc_sim.play.seat import SeatFault

__all__ = ["AgentFault", "MATCH_KINDS", "play_rounds", "play_matches", "record_round", "record_row",  # noqa: F822 - __getattr__
           "max_match_rounds", "policies_tuple", "DEFAULT_FAULT_DIR"]

_ROWS_PER_CALL = 1 << 16          # round rows per compiled play_matches call (memory bound)

#: "auto", "always" or "never": when to use a specialised loop (see the module docstring)
SPECIALISE = os.environ.get("KC_SIM_SPECIALISE", "auto")
#: rounds after which a specialised loop on disk is loaded (a load, ~20 ms, is the time of
#: ~30,000 greedy rounds saved)
LOAD_AFTER_ROUNDS = 20_000
#: generic-loop CPU-seconds on one set of policies after which its specialised loop is compiled
#: (a compile, 2-9 s cold, then costs under half the play time already spent)
COMPILE_AFTER_S = 20.0
#: policies slower than this per decision are not worth a compile (the call saved is ~10 ns)
CHEAP_NS = 250.0
#: generic-loop CPU-seconds a process gathers before adding them to the set's file
SAVE_EVERY_S = 1.0
_played: dict = {}                # Specialised -> _Use
_broken: set = set()              # Specialised loops that failed to compile here (not tried again)


class _Use:
    """The generic loop's work on one set of policies: in this process, and saved (as lines
    of CPU-seconds appended to ``<loop source>.played``) for every process on this machine."""

    def __init__(self, sp):
        self.path = sp.path.with_suffix(".played")
        self.rounds = 0
        self.cpu = 0.0              # in this process
        self.decisions = 0
        self.unsaved = 0.0          # of ``cpu``, not yet in the file

    def add(self, rows: np.ndarray, cpu: float) -> None:
        """Add a generic-loop call's rounds, CPU time and decisions."""
        self.rounds += len(rows)
        self.cpu += cpu
        self.unsaved += cpu
        # one decision per action, and one per stop: every turn but a last one ended by going out
        self.decisions += int(rows[:, loop.C_ACTIONS].sum() + rows[:, loop.C_TURNS].sum()) - int(
            (rows[:, loop.C_END] == layout.END_OUT).sum())
        if self.unsaved >= SAVE_EVERY_S:
            try:                    # one short append: lines from several processes never mix
                with open(self.path, "a") as f:
                    f.write(f"{self.unsaved:.3f}\n")
                self.unsaved = 0.0
            except OSError:         # an unwritable cache: only this process's time counts
                pass

    def total_cpu(self) -> float:
        """CPU-seconds of every process (the file) and this one's unsaved part."""
        try:
            saved = sum(float(x) for x in self.path.read_text().split())
        except (OSError, ValueError):
            saved = 0.0
        return max(saved + self.unsaved, self.cpu)


def __getattr__(name):
    # re-exported lazily: kc_sim.play.recorded imports the generic loop's play_round, which
    # compiles on first use, and importing the runner compiles nothing
    if name in ("record_round", "record_row"):
        from kc_sim.play import recorded
        return getattr(recorded, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _engine(specs, engine: str) -> bool:
    """True for the compiled loop."""
    if engine not in ("auto", "compiled", "python"):
        raise UserError(f"bad engine {engine!r}: expected auto, compiled or python")
    all_compiled = all(a.compiled for a in specs)
    if engine == "compiled" and not all_compiled:
        py = [a.name for a in specs if not a.compiled]
        raise UserError(f"the compiled loop needs compiled agents only; Python agents: {', '.join(py)}")
    return all_compiled and engine != "python"


def policies_tuple(agents) -> tuple:
    """The 8-seat policy tuple of the compiled loop. The seats beyond the players are never
    called: they repeat the first seat's policy, so no other policy needs compiling."""
    pols = [a.policy for a in agents]
    return tuple(pols + pols[:1] * (layout.MAX_SEATS - len(pols)))


def _compiled_loop(specs, mode: str, n_rounds: int):
    """``(play function, policies argument, tally)`` for a compiled call of ``n_rounds``
    rounds (an estimate for matches): a specialised loop with its slots array (tally None),
    or ``loop.play_rounds``/``play_matches`` with the policy tuple and the tally the call's
    work is added to (None when the policies cannot be specialised). See the module docstring."""
    if SPECIALISE not in ("auto", "always", "never"):
        raise UserError(f"bad KC_SIM_SPECIALISE {SPECIALISE!r}: expected auto, always or never")
    generic = loop.play_rounds if mode == "rounds" else loop.play_matches
    policies = [a.policy for a in specs]
    sp = None if SPECIALISE == "never" else specialise.specialised(policies)
    if sp is not None and (SPECIALISE == "always" or (sp not in _broken and _pays(sp, mode, n_rounds))):
        try:
            return sp.load(mode), sp.slots(policies), None
        except Exception:          # pragma: no cover - e.g. a read-only cache folder: the generic loop still works
            if SPECIALISE == "always":
                raise
            _broken.add(sp)
    return generic, policies_tuple(specs), (None if sp is None else _use(sp))


def _use(sp) -> _Use:
    if sp not in _played:
        _played[sp] = _Use(sp)
    return _played[sp]


def _pays(sp, mode: str, n_rounds: int) -> bool:
    """Is the specialised loop worth using for this call (``SPECIALISE = "auto"``)?"""
    if sp.ready(mode):
        return True
    use = _use(sp)
    if sp.on_disk(mode):
        return use.rounds + n_rounds >= LOAD_AFTER_ROUNDS
    if use.cpu * 1e9 > CHEAP_NS * max(use.decisions, 1) or use.decisions == 0:
        return False                # costly policies (or nothing played here yet to tell)
    return use.total_cpu() >= COMPILE_AFTER_S


def _count(use, rows: np.ndarray, cpu: float) -> None:
    """Add a generic-loop call's work to its policy set's :class:`_Use` (None: not specialisable)."""
    if use is not None and len(rows):
        use.add(rows, cpu)


def max_match_rounds(rules: RuleSet, players: int) -> int:
    """An upper bound on the rounds of one match under ``rules`` (the size of the round-row
    buffer of the compiled match loop; ``kc_sim.core.match.max_match_rounds``)."""
    return match_rule.max_match_rounds(rules.match_code, players, rules.match_rounds)


# --- rounds ----------------------------------------------------------------------------------

def play_rounds(agents, seeds, rules: RuleSet | str, *, fault_dir=None, engine: str = "auto") -> np.ndarray:
    """One independent round per seed, ``agents`` by seat (AgentSpecs or names). Returns
    int64 rows with ``kc_sim.core.loop``'s C_* columns (C_MATCH and C_MATCH_ROUND are -1).
    A misbehaving agent raises :class:`AgentFault` after saving the round to ``fault_dir``."""
    rules = parse_rules(rules)
    specs = load_agents(agents)
    players = len(specs)
    rules.check_players(players)
    seeds = np.ascontiguousarray(seeds, dtype=np.int64).reshape(-1)
    out = np.zeros((len(seeds), loop.ROUND_COLS), dtype=np.int64)
    if len(seeds) == 0:
        return out
    if not _engine(specs, engine):
        _python_rounds(specs, seeds, rules, out, fault_dir)
        return out
    play, pols, tally = _compiled_loop(specs, "rounds", len(seeds))
    codes = rules.codes()
    raised = False
    t = time.process_time()
    try:
        bad = play(seeds, players, codes, pols, out)
    except Exception:
        raised = True

        def run(lo, hi):
            part = np.zeros((hi - lo, loop.ROUND_COLS), dtype=np.int64)
            return raises(lambda: play(seeds[lo:hi], players, codes, pols, part))

        bad = first_failing(run, len(seeds))
    if bad >= 0:
        # replay the faulty round through the Python loop: it raises the AgentFault
        _python_rounds(specs, seeds[bad:bad + 1], rules, np.zeros((1, loop.ROUND_COLS), dtype=np.int64),
                       fault_dir, first_index=int(bad))
        raise unreproduced(specs, int(seeds[bad]), None if raised else out[bad])
    _count(tally, out, time.process_time() - t)
    return out


def _python_rounds(specs, seeds, rules, out, fault_dir, first_index: int = 0) -> None:
    players = len(specs)
    python_loop = PythonLoop(specs, rules, fault_dir)
    python_loop.new_match()
    seat_map = list(range(players))
    seat_map_arr = np.arange(layout.MAX_SEATS, dtype=np.int64)
    scores = (0,) * players
    first_dealer = loop.first_dealer
    for i, seed in enumerate(seeds.tolist()):
        dealer = first_dealer(seed, players)
        try:
            python_loop.play(seed, players, dealer, seat_map, scores)
        except SeatFault as f:
            raise python_loop.fault(f, seed, players, dealer, seat_map, match=None,
                                    round=first_index + i) from f.__cause__
        write_row(python_loop.st, seed, seat_map_arr, out, i, -1, -1)


# --- matches ---------------------------------------------------------------------------------

def play_matches(agents, match_seeds, rules: RuleSet | str, match_base: int = 0, *, fault_dir=None,
                 engine: str = "auto") -> tuple[np.ndarray, np.ndarray]:
    """One match per seed under ``rules.match`` (to_25, rounds:N, eliminate_25), ``agents``
    by match seat, the deal passing left after every round. Returns (round rows, match
    rows): round rows in order with C_* columns (C_MATCH = match_base + index), match rows
    with M_* columns. A misbehaving agent raises :class:`AgentFault`."""
    rules = parse_rules(rules)
    specs = load_agents(agents)
    players = len(specs)
    rules.check_players(players)
    seeds = np.ascontiguousarray(match_seeds, dtype=np.int64).reshape(-1)
    kind, n_rounds = int(rules.match_code), rules.match_rounds
    matches_out = np.zeros((len(seeds), loop.MATCH_COLS), dtype=np.int64)
    if len(seeds) == 0:
        return np.zeros((0, loop.ROUND_COLS), dtype=np.int64), matches_out
    if not _engine(specs, engine):
        return _python_matches(specs, seeds, rules, match_base, matches_out, fault_dir), matches_out
    codes = rules.codes()
    bound = max_match_rounds(rules, players)
    per_call = max(1, _ROWS_PER_CALL // bound)
    parts = []
    for lo in range(0, len(seeds), per_call):
        hi = min(lo + per_call, len(seeds))
        # rounds per match: a guess for the first call, then the mean so far
        played = sum(len(p) for p in parts)
        play, pols, tally = _compiled_loop(specs, "matches", (hi - lo) * (played // lo if lo else 8))
        buf = np.zeros(((hi - lo) * bound, loop.ROUND_COLS), dtype=np.int64)
        fault_m, fault_row = None, None
        t = time.process_time()
        try:
            n = play(seeds[lo:hi], players, codes, kind, n_rounds, pols, buf, matches_out[lo:hi], match_base + lo)
        except Exception:
            def run(a, b):
                rb = np.zeros(((b - a) * bound, loop.ROUND_COLS), dtype=np.int64)
                mb = np.zeros((b - a, loop.MATCH_COLS), dtype=np.int64)
                return raises(lambda: play(seeds[lo + a:lo + b], players, codes, kind, n_rounds, pols, rb, mb, 0))

            fault_m = lo + first_failing(run, hi - lo)
        else:
            if n < 0:
                fault_row = buf[-(n + 1)]
                fault_m = int(fault_row[loop.C_MATCH]) - match_base
        if fault_m is not None:
            # replay the faulty match through the Python loop: it raises the AgentFault
            _python_matches(specs, seeds[fault_m:fault_m + 1], rules, match_base + fault_m,
                            np.zeros((1, loop.MATCH_COLS), dtype=np.int64), fault_dir)
            raise unreproduced(specs, int(seeds[fault_m]), fault_row)
        _count(tally, buf[:n], time.process_time() - t)
        parts.append(buf[:n])
    return np.concatenate(parts), matches_out


def _python_matches(specs, seeds, rules, match_base, matches_out, fault_dir) -> np.ndarray:
    players = len(specs)
    python_loop = PythonLoop(specs, rules, fault_dir)
    rows = []
    out = np.zeros((1, loop.ROUND_COLS), dtype=np.int64)
    seat_map_arr = np.zeros(layout.MAX_SEATS, dtype=np.int64)
    st = python_loop.st
    for m, mseed in enumerate(seeds.tolist()):
        match = Match(mseed, players, rules)
        python_loop.new_match()
        for rnd in match.rounds():
            k = len(rnd.seat_map)
            try:
                python_loop.play(rnd.seed, k, rnd.dealer, rnd.seat_map, rnd.scores)
            except SeatFault as f:
                raise python_loop.fault(f, rnd.seed, k, rnd.dealer, rnd.seat_map, match=match_base + m,
                                        round=rnd.index, match_seed=mseed) from f.__cause__
            seat_map_arr[:k] = rnd.seat_map
            write_row(st, rnd.seed, seat_map_arr, out, 0, match_base + m, rnd.index)
            rows.append(out[0].copy())
            match.add_round(st[layout.PENALTY:layout.PENALTY + k])
        match.row(matches_out[m])
    if not rows:
        return np.zeros((0, loop.ROUND_COLS), dtype=np.int64)
    return np.array(rows, dtype=np.int64)
