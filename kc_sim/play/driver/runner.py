"""Playing rounds and matches between agents: the compiled loop when every seat is a
compiled policy, the Python loop (:mod:`kc_sim.play.driver.python_loop`) otherwise. Both write
the same round rows (``kc_sim.core.loop``'s ``C_*`` columns) and match rows (``M_*``
columns), and give identical results for the same agents and seeds.

* :func:`play_rounds` - one independent round per seed (dealer drawn from the seed).
* :func:`play_matches` - one match per seed under ``rules.match``.
* :class:`AgentFault` - a misbehaving agent stops the run with one line, after its round's
  game record is saved (:mod:`kc_sim.play.driver.faults`; re-exported here).

A fault in the compiled loop is found (by bisection when a policy raises) and the round
replayed through the Python loop, which raises the AgentFault with the round's record.

**Which compiled loop** is decided by the agents alone (:func:`loop_name` says which):
when every policy can be found again by name (the built-ins, policies loaded by name), the
loop compiled for that set of policies (:mod:`kc_sim.core.policy_set`: the trusted built-ins
compiled into it, their actions not checked again), compiled on first use and then loaded from
numba's cache; otherwise the generic loop, which calls policies through function pointers.
Both play exactly the same rounds. ``loop_agents`` (a tournament passes all of its agents)
makes every line-up of a run play in the one loop compiled for all of them.
"""

from __future__ import annotations

import time

import numpy as np

from kc_sim.core import layout, loop
from kc_sim.core import match as match_rule
from kc_sim.core.policy_set import PolicySet, policy_ref
from kc_sim.core.draw_luck import luck_of_log, write_luck
from kc_sim.core.step import first_dealer
from kc_sim.errors import UserError
from kc_sim.game.rules import RuleSet, parse_rules
from kc_sim.play.driver.faults import (
    DEFAULT_FAULT_DIR,
    AgentFault,
    SeatFault,
    first_failing,
    raises,
    unreproduced,
)
from kc_sim.play.driver.match import Match
from kc_sim.play.driver.python_loop import PythonLoop, write_row
from kc_sim.play.driver.watchdog import blocks_in_play
from kc_sim.play.agents.registry import load_agents, trusted

__all__ = ["AgentFault", "play_rounds", "play_matches", "max_match_rounds", "policies_tuple", "policy_set", "loop_name", "compiled_loop", "warm", "WARM_SETS",
           "DEFAULT_FAULT_DIR"]

_ROWS_PER_CALL = 1 << 16          # round rows per compiled play_matches call (memory bound)


def _engine(specs, engine: str) -> bool:
    """True for a compiled loop (``compiled``, or ``generic``: the generic loop, every seat's
    action checked for legality, as a conformance check needs)."""
    if engine not in ("auto", "compiled", "generic", "python"):
        raise UserError(f"bad engine {engine!r}: expected auto, compiled, generic or python")
    all_compiled = all(a.compiled for a in specs)
    if engine in ("compiled", "generic") and not all_compiled:
        py = [a.name for a in specs if not a.compiled]
        raise UserError(f"the compiled loop needs compiled agents only; Python agents: {', '.join(py)}")
    return all_compiled and engine != "python"


def policies_tuple(agents) -> tuple:
    """The 8-seat policy tuple of the compiled loop. The seats beyond the players are never
    called: they repeat the first seat's policy, so no other policy needs compiling."""
    pols = [a.policy for a in agents]
    return tuple(pols + pols[:1] * (layout.MAX_SEATS - len(pols)))


_sets: dict = {}


def policy_set(specs) -> PolicySet | None:
    """The :class:`~kc_sim.core.policy_set.PolicySet` of the compiled agents ``specs`` (their
    distinct policies, trusted ones as such), or None when one of them is not compiled or cannot
    be found again by name (it plays in the generic loop). One object per set."""
    if not specs or not all(s.compiled for s in specs):
        return None
    key = frozenset((s.policy, trusted(s), s.mem_words) for s in specs)
    if key not in _sets:
        nameable = all(policy_ref(p) is not None for p, _, _ in key)
        _sets[key] = PolicySet(key) if nameable else None
    return _sets[key]


def _set_for(specs, loop_agents) -> PolicySet | None:
    """The policy set ``specs`` play in: that of the compiled ``loop_agents`` (default
    ``specs``) when it holds all of their policies, else None (the generic loop)."""
    pset = policy_set(specs if loop_agents is None else [s for s in load_agents(loop_agents) if s.compiled])
    return pset if pset is not None and all(s.policy in pset.policies for s in specs) else None


def compiled_loop(specs, mode: str, loop_agents=None, generic: bool = False):
    """``(play function, its policies argument)`` for the compiled agents ``specs`` by match
    seat: the loop of ``mode`` (``rounds``, ``matches``, or ``rounds_luck``: rounds with the draw
    control variates) compiled for their policy set (that of ``loop_agents`` when given), or
    the generic loop with the policy tuple (see the module docstring); ``generic``: always the
    generic loop, which checks every seat's action (a trusted built-in's too)."""
    pset = None if generic else _set_for(specs, loop_agents)
    if pset is not None:
        return loop.LOOPS[mode], pset.seat([s.policy for s in specs])
    name = {"rounds": "play_rounds", "matches": "play_matches", "rounds_luck": "play_rounds_luck"}[mode]
    return getattr(loop, name), policies_tuple(specs)


def loop_name(agents, engine: str = "auto", loop_agents=None) -> str:
    """Which loop plays ``agents``: ``specialised loop`` (compiled for their set of policies),
    ``generic loop`` (function pointers) or ``Python loop`` (a Python agent is seated)."""
    specs = load_agents(agents)
    if not _engine(specs, engine):
        return "Python loop"
    return "generic loop" if engine == "generic" or _set_for(specs, loop_agents) is None else "specialised loop"


#: the agent sets ``kc-sim warm`` compiles by default: what ``make run`` and ``make bench`` play
WARM_SETS = (("greedy", "pile-merger"), ("random",), ("greedy",), ("king-first",), ("pile-merger",),
             ("random", "greedy", "king-first", "pile-merger"), ("planner",), ("sampler",))


def warm(agent_sets=WARM_SETS, modes=("rounds",)):
    """Compile (or load from numba's cache) the loop each set of agents plays in, for each
    mode, by playing one round (one match); yields ``(names, mode, loop, seconds)`` as each
    is done. A set of more agents than a round seats (up to 8) is warmed as a run's set."""
    for names in agent_sets:
        specs = load_agents(names)
        seated = (specs * 2)[:max(2, min(len(specs), layout.MAX_SEATS))]
        for mode in modes:
            t = time.perf_counter()
            if mode == "rounds":
                play_rounds(seated, [0], "classic", loop_agents=specs)
            else:
                play_matches(seated, [0], "classic,match=rounds:1", loop_agents=specs)
            yield tuple(s.name for s in specs), mode, loop_name(seated, loop_agents=specs), time.perf_counter() - t


def max_match_rounds(rules: RuleSet, players: int) -> int:
    """An upper bound on the rounds of one match under ``rules`` (the size of the round-row
    buffer of the compiled match loop; ``kc_sim.core.match.max_match_rounds``)."""
    return match_rule.max_match_rounds(rules.match_code, players, rules.match_rounds)


# --- rounds ----------------------------------------------------------------------------------

def play_rounds(agents, seeds, rules: RuleSet | str, *, fault_dir=None, engine: str = "auto",
                loop_agents=None, luck: bool = False, _loop_class=None) -> np.ndarray:
    """One independent round per seed, ``agents`` by seat (AgentSpecs or names). Returns
    int64 rows with ``kc_sim.core.loop``'s C_* columns (C_MATCH and C_MATCH_ROUND are -1).
    ``engine``: ``auto`` (the compiled loop when every agent is compiled), ``compiled``,
    ``generic`` (the generic compiled loop, every action checked) or ``python``.
    A misbehaving agent raises :class:`AgentFault` after saving the round to ``fault_dir``.
    ``loop_agents``: the agents the compiled loop is compiled for (default ``agents``).
    ``luck``: also compute the draw control variates (:mod:`kc_sim.core.draw_luck`), written
    to the columns ``loop.C_LUCK ...`` (rows then have ``loop.LUCK_ROUND_COLS`` columns).
    ``_loop_class`` (internal): the Python loop class to play with, default
    :class:`~kc_sim.play.driver.python_loop.PythonLoop` (the replay of a stalled chunk passes a
    subclass that shares its state with the process watching it)."""
    rules = parse_rules(rules)
    specs = load_agents(agents)
    players = len(specs)
    rules.check_players(players)
    seeds = np.ascontiguousarray(seeds, dtype=np.int64).reshape(-1)
    if luck:
        luck_rules(rules)
    out = np.zeros((len(seeds), loop.LUCK_ROUND_COLS if luck else loop.ROUND_COLS), dtype=np.int64)
    if len(seeds) == 0:
        return out
    if not _engine(specs, engine):
        _python_rounds(specs, seeds, rules, out, fault_dir, loop_class=_loop_class)
        return out
    play, pols = compiled_loop(specs, "rounds_luck" if luck else "rounds", loop_agents, engine == "generic")
    if luck:
        play = _with_scratch(play)
    codes = rules.codes()
    raised = False
    try:
        with blocks_in_play().playing(out):
            bad = play(seeds, players, codes, pols, out)
    except Exception:
        raised = True

        def run(lo, hi):
            part = np.zeros((hi - lo, out.shape[1]), dtype=np.int64)
            return raises(lambda: play(seeds[lo:hi], players, codes, pols, part))

        bad = first_failing(run, len(seeds))
    if bad >= 0:
        # replay the faulty round through the Python loop: it raises the AgentFault
        _python_rounds(specs, seeds[bad:bad + 1], rules, np.zeros((1, loop.ROUND_COLS), dtype=np.int64),
                       fault_dir, first_index=int(bad), loop_class=_loop_class)
        raise unreproduced(specs, int(seeds[bad]), None if raised else out[bad])
    return out


def luck_rules(rules: RuleSet) -> None:
    """Refuse rules the draw control variates do not cover (draw=if_stuck)."""
    if rules.draw == "if_stuck":
        raise UserError("the draw control variates need draw=end or draw=start (under draw=if_stuck a turn "
                        "draws only when stuck): turn them off (--no-luck) or change the rules")


def _with_scratch(play):
    """The luck loop as a call with the round loop's arguments: its scratch array added."""
    def run(seeds, players, codes, pols, out):
        return play(seeds, players, codes, pols, out, np.zeros((layout.MAX_SEATS, loop.N_LUCK)))
    return run


def _python_rounds(specs, seeds, rules, out, fault_dir, first_index: int = 0, loop_class=None) -> None:
    players = len(specs)
    python_loop = (loop_class or PythonLoop)(specs, rules, fault_dir)
    python_loop.new_match()
    seat_map = list(range(players))
    seat_map_arr = np.arange(layout.MAX_SEATS, dtype=np.int64)
    scores = (0,) * players
    for i, seed in enumerate(seeds.tolist()):
        dealer = first_dealer(seed, players)
        try:
            python_loop.play(seed, players, dealer, seat_map, scores)
        except SeatFault as f:
            raise python_loop.fault(f, seed, players, dealer, seat_map, match=None,
                                    round=first_index + i) from f.__cause__
        write_row(python_loop.st, seed, seat_map_arr, out, i, -1, -1)
        if out.shape[1] > loop.ROUND_COLS:
            sums = np.zeros((layout.MAX_SEATS, loop.N_LUCK))
            luck_of_log(seed, players, dealer, rules.codes(), python_loop.log[1:python_loop.log[0]], sums)
            write_luck(sums, seat_map_arr, players, out, i)


# --- matches ---------------------------------------------------------------------------------

def play_matches(agents, match_seeds, rules: RuleSet | str, match_base: int = 0, *, fault_dir=None,
                 engine: str = "auto", loop_agents=None, _loop_class=None) -> tuple[np.ndarray, np.ndarray]:
    """One match per seed under ``rules.match`` (to_25, rounds:N, eliminate_25), ``agents``
    by match seat, the deal passing left after every round. Returns (round rows, match
    rows): round rows in order with C_* columns (C_MATCH = match_base + index), match rows
    with M_* columns. A misbehaving agent raises :class:`AgentFault`. ``loop_agents`` and
    ``_loop_class``: as for :func:`play_rounds`."""
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
        return _python_matches(specs, seeds, rules, match_base, matches_out, fault_dir, _loop_class), matches_out
    codes = rules.codes()
    bound = max_match_rounds(rules, players)
    per_call = max(1, _ROWS_PER_CALL // bound)
    play, pols = compiled_loop(specs, "matches", loop_agents, engine == "generic")
    parts = []
    for lo in range(0, len(seeds), per_call):
        hi = min(lo + per_call, len(seeds))
        buf = np.zeros(((hi - lo) * bound, loop.ROUND_COLS), dtype=np.int64)
        fault_m, fault_row = None, None
        try:
            with blocks_in_play().playing(buf):
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
                            np.zeros((1, loop.MATCH_COLS), dtype=np.int64), fault_dir, _loop_class)
            raise unreproduced(specs, int(seeds[fault_m]), fault_row)
        parts.append(buf[:n])
    return np.concatenate(parts), matches_out


def _python_matches(specs, seeds, rules, match_base, matches_out, fault_dir, loop_class=None) -> np.ndarray:
    players = len(specs)
    python_loop = (loop_class or PythonLoop)(specs, rules, fault_dir)
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
