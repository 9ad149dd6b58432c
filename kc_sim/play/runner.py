"""Playing rounds and matches between agents: the compiled loop when every seat is a
compiled policy, a Python loop otherwise. Both write the same round rows
(``kc_sim.core.loop``'s ``C_*`` columns) and match rows (``M_*`` columns), and give
identical results for the same agents and seeds.

* :func:`play_rounds` - one independent round per seed (dealer drawn from the seed).
* :func:`play_matches` - one match per seed under ``rules.match``.
* :func:`record_round`, :func:`record_row` - the game record of one round, any agent mix.
* :class:`AgentFault` - an agent raised, returned something that is not an action, or an
  illegal action: the run stops with one line naming the agent, seed, round, turn and
  action, after saving that round's game record (JSON Lines) to ``fault_dir``
  (default ``kc-sim-faults/`` in the current directory).

The Python loop makes one compiled call per decision: it checks and applies the last
action (logging it, so a faulty round's record is at hand) and, for a Python seat,
copies the visible part of the round into a small buffer that
:class:`kc_sim.play.observation.SeatView` decodes lazily. Compiled seats in a mixed game are called
from Python with their own memory row, exactly as the compiled loop calls them.
"""

from __future__ import annotations

import operator
from pathlib import Path

import numba as nb
import numpy as np

from kc_sim.core import layout as L
from kc_sim.core import loop
from kc_sim.core.legal import is_legal
from kc_sim.core.policy import MEM_SIZE, random_policy
from kc_sim.core.rng import derive
from kc_sim.core.step import deal
from kc_sim.errors import UserError
from kc_sim.game.actions import action_text, parse_action
from kc_sim.game.rules import RuleSet, parse_rules
from kc_sim.play.observation import V_LEGAL, VIEW_SIZE, SeatView, fill_view
from kc_sim.records.format import (
    dealt_position,
    make_record,
    turns_from_log,
    write_records,
)

__all__ = ["AgentFault", "MATCH_KINDS", "play_rounds", "play_matches", "record_round", "record_row",
           "max_match_rounds", "DEFAULT_FAULT_DIR"]

MATCH_KINDS = {"to_25": 0, "rounds": 1, "eliminate_25": 2}
DEFAULT_FAULT_DIR = "kc-sim-faults"
LOG_SIZE = 3 * loop.MAX_DECISIONS + 8
_ROWS_PER_CALL = 1 << 16          # round rows per compiled play_matches call (memory bound)
_ACTION_HELP = "an action id 0-448 or its text (7H>E, N>E, stop)"


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


def _rebuild_fault(message: str, fields: dict) -> AgentFault:
    return AgentFault(message, **fields)


# --- compiled stepping for the Python loop -------------------------------------------------

@nb.njit(cache=True)
def _begin(st, seed, players, dealer, rules, mem, log):
    """Deal a round, seed every seat's policy memory, open the event log."""
    deal(st, seed, players, dealer, rules)
    loop.seed_policies(mem, seed, players)
    log[0] = 2
    log[1] = loop.LOG_TURN + st[L.SEAT]


@nb.njit(cache=True)
def _advance(st, a, pymask, vis, log):
    """Apply action ``a`` of the seat to act (none when a < 0), logging it like the compiled
    loop does. Returns -1 if ``a`` is illegal (nothing applied), 0 once the round is over,
    else ``1 + seat + 16 * n_legal`` for the next decision; for a seat in ``pymask`` the
    visible state and its n_legal legal actions are copied into ``vis``."""
    n = log[0]
    if a >= 0:
        if not is_legal(st, a):
            return -1
        n = loop.play_action(st, a, log, n)
    log[0] = n
    if st[L.DONE]:
        return 0
    seat = st[L.SEAT]
    k = 0
    if (pymask >> seat) & 1:
        k = fill_view(st, vis)
    return 1 + seat + 16 * k


@nb.njit(cache=True)
def _write_row(st, seed, seat_map, out, row, match, match_round):
    loop.write_round(st, seed, seat_map, loop.STATUS_OK, -1, out, row)
    out[row, loop.C_MATCH] = match
    out[row, loop.C_MATCH_ROUND] = match_round


_TEXT_IDS = {action_text(a): a for a in range(L.N_ACTIONS)}


def as_action(value) -> int:
    """An action id from what an agent returned, or -1 when it is not an action."""
    if isinstance(value, bool):
        return -1
    if isinstance(value, str):
        a = _TEXT_IDS.get(value)
        if a is not None:
            return a
        try:
            return parse_action(value)
        except UserError:
            return -1
    try:
        a = operator.index(value)
    except TypeError:
        return -1
    return a if 0 <= a < L.N_ACTIONS else -1


def _short(value, limit: int = 80) -> str:
    text = " ".join(repr(value).split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


class _Fault:
    """What went wrong in a round of the Python loop (turned into an AgentFault by the caller)."""

    def __init__(self, seat: int, kind: str, what: str, action: str | None, exc: BaseException | None = None):
        self.seat, self.kind, self.what, self.action, self.exc = seat, kind, what, action, exc


class _Table:
    """The agents of one run (by match seat) with the buffers of the Python loop."""

    def __init__(self, agents, rules: RuleSet, fault_dir=None):
        self.specs = agents
        self.names = [a.name for a in agents]
        self.rules = rules
        self.codes = rules.codes()
        self.fault_dir = Path(DEFAULT_FAULT_DIR if fault_dir is None else fault_dir)
        self.instances = [None if a.compiled else a.factory() for a in agents]
        self.policies = [a.policy for a in agents]
        self.st = np.zeros(L.STATE_SIZE, dtype=np.int64)
        self.mem = np.zeros((L.MAX_SEATS, MEM_SIZE), dtype=np.int64)
        self.mem_rows = [self.mem[s] for s in range(L.MAX_SEATS)]
        self.vis = np.zeros(VIEW_SIZE, dtype=np.int64)
        self.log = np.zeros(LOG_SIZE, dtype=np.int64)

    def new_match(self, players: int) -> None:
        for s, inst in enumerate(self.instances):
            if inst is not None:
                self._call_hook(s, "new_match", inst.new_match, s, players, self.rules)

    def _call_hook(self, seat, hook, fn, *args):
        try:
            fn(*args)
        except Exception as e:  # an agent's hook raising is a fault too
            raise AgentFault(f"agent {self.names[seat]!r} (seat {seat}) raised {type(e).__name__} in {hook}: "
                             f"{' '.join(str(e).split())}", agent=self.names[seat], seat=seat, seed=-1, match=None,
                             round=-1, turn=-1, action=None, path=None) from e

    def play(self, seed: int, k: int, dealer: int, seat_map, scores: tuple) -> _Fault | None:
        """Play one round (round seat s is match seat ``seat_map[s]``); None when it ends
        normally, else the fault (the state and log stay as they were at the fault)."""
        st, mem, vis, log, rules = self.st, self.mem, self.vis, self.log, self.rules
        _begin(st, seed, k, dealer, self.codes, mem, log)
        acts = [None] * k
        pols = [None] * k
        pymask = 0
        seeds = None
        for s in range(k):
            inst = self.instances[seat_map[s]]
            if inst is None:
                pols[s] = self.policies[seat_map[s]]
                continue
            if seeds is None:
                seeds = mem[:k, 0].tolist()
            try:
                inst.start_round(s, k, rules, seeds[s])
            except Exception as e:
                return _Fault(s, "raised", f"raised {type(e).__name__} in new_round: {' '.join(str(e).split())}",
                              None, e)
            acts[s] = inst.act
            pymask |= 1 << s
        rows = self.mem_rows
        advance = _advance
        view = SeatView
        n_actions = L.N_ACTIONS
        a = -1
        decisions = 0
        limit = loop.MAX_DECISIONS
        while True:
            code = advance(st, a, pymask, vis, log)
            if code <= 0:
                break
            code -= 1
            s = code & 15
            act = acts[s]
            if act is not None:
                try:
                    a = act(view(vis[:V_LEGAL + (code >> 4)].tolist(), rules, scores))
                except Exception as e:
                    return _Fault(s, "raised", f"raised {type(e).__name__}: {' '.join(str(e).split())}", None, e)
                if type(a) is not int or not 0 <= a < n_actions:
                    value = a
                    a = as_action(value)
                    if a < 0:
                        return _Fault(s, "not an action", f"returned {_short(value)}, which is not an action "
                                      f"(expected {_ACTION_HELP})", _short(value))
            else:
                try:
                    a = pols[s](st, s, rows[s])
                except Exception as e:
                    return _Fault(s, "raised", f"raised {type(e).__name__}: {' '.join(str(e).split())}", None, e)
                if not 0 <= a < n_actions:
                    return _Fault(s, "not an action", f"returned {a}, which is not an action (expected {_ACTION_HELP})",
                                  str(a))
            decisions += 1
            if decisions > limit:
                return _Fault(s, "too long", f"is in a round that passed {limit} decisions", None)
        if code < 0:
            s = int(st[L.SEAT])
            vis2 = np.zeros(VIEW_SIZE, dtype=np.int64)
            n = fill_view(st, vis2)
            legal = " ".join(action_text(x) for x in vis2[V_LEGAL:V_LEGAL + n])
            return _Fault(s, "illegal", f"played the illegal action {action_text(a)} (legal: {legal})", action_text(a))
        return None

    # --- faults -----------------------------------------------------------------------
    def record(self, seed: int, k: int, dealer: int, seat_map, *, match: int = 0, round: int = 0) -> dict:
        """The game record of the round just played (finished or stopped by a fault)."""
        st = self.st
        done = bool(st[L.DONE])
        winner = int(st[L.WINNER])
        return make_record(
            rules=self.rules, names=[self.names[seat_map[s]] for s in range(k)], seed=seed,
            initial=dealt_position(seed, k, dealer, self.rules), turns=turns_from_log(self.log[1:self.log[0]]),
            end=L.END_NAMES[int(st[L.END])] if done else "unfinished",
            winner=winner if done and winner >= 0 else None,
            penalties=[int(x) for x in st[L.PENALTY:L.PENALTY + k]] if done else [],
            match=match, round=round,
        )

    def fault(self, f: _Fault, seed: int, k: int, dealer: int, seat_map, *, match: int | None, round: int,
              match_seed: int | None = None) -> AgentFault:
        """Save the faulty round's record and build the one-line AgentFault."""
        name = self.names[seat_map[f.seat]]
        turn = int(self.st[L.TURNS]) - 1
        rec = self.record(seed, k, dealer, seat_map, match=match or 0, round=round)
        rec["fault"] = {"agent": name, "seat": f.seat, "kind": f.kind, "turn": turn, "action": f.action,
                        "message": f.what}
        if match is None:
            where = f"seed {seed}, round {round}, turn {turn}"
            fname = f"fault-seed{seed}-round{round}.jsonl"
        else:
            where = f"match seed {match_seed}, match {match}, round {round} (round seed {seed}), turn {turn}"
            fname = f"fault-match{match}-seed{match_seed}-round{round}.jsonl"
        path = self.fault_dir / fname
        saved = f"game record saved to {path}"
        try:
            write_records(path, [rec])
        except OSError as e:
            path, saved = None, f"could not save the game record ({e})"
        return AgentFault(f"agent {name!r} (seat {f.seat}) {f.what} at {where}; {saved}",
                          agent=name, seat=f.seat, seed=seed if match is None else match_seed, match=match,
                          round=round, turn=turn, action=f.action, path=path)


# --- helpers ---------------------------------------------------------------------------------

def _specs(agents) -> list:
    from kc_sim.play.agent import AgentSpec
    from kc_sim.play.registry import load_agent

    out = [load_agent(a) if isinstance(a, str) else a for a in agents]
    for a in out:
        if not isinstance(a, AgentSpec):
            raise UserError(f"bad agent {a!r}: expected an agent name or an AgentSpec (kc_sim.play.registry.load_agent)")
    return out


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
    """The 8-seat policy tuple of the compiled loop (unused seats padded)."""
    pols = [a.policy for a in agents]
    return tuple(pols + [random_policy] * (L.MAX_SEATS - len(pols)))


def _first_failing(run, n: int) -> int:
    """Index of the first item whose batch raises, by bisection (``run(lo, hi)`` True when it raises)."""
    lo, hi = 0, n
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if run(lo, mid):
            hi = mid
        else:
            lo = mid
    return lo


def _raises(fn) -> bool:
    try:
        fn()
    except Exception:
        return True
    return False


def max_match_rounds(rules: RuleSet, players: int) -> int:
    """An upper bound on the rounds of one match: every round adds at least 1 to the
    penalty of all but at most one player (the one who went out)."""
    kind = MATCH_KINDS[rules.match_kind]
    if kind == 1:
        return rules.match_rounds
    if kind == 0:
        return 24 * players // (players - 1) + 1
    return 25 * players + 1


# --- rounds ----------------------------------------------------------------------------------

def play_rounds(agents, seeds, rules: RuleSet | str, *, fault_dir=None, engine: str = "auto") -> np.ndarray:
    """One independent round per seed, ``agents`` by seat (AgentSpecs or names). Returns
    int64 rows with ``kc_sim.core.loop``'s C_* columns (C_MATCH and C_MATCH_ROUND are -1).
    A misbehaving agent raises :class:`AgentFault` after saving the round to ``fault_dir``."""
    rules = parse_rules(rules)
    specs = _specs(agents)
    players = len(specs)
    rules.check_players(players)
    seeds = np.ascontiguousarray(seeds, dtype=np.int64).reshape(-1)
    out = np.zeros((len(seeds), loop.ROUND_COLS), dtype=np.int64)
    if len(seeds) == 0:
        return out
    if _engine(specs, engine):
        pols = policies_tuple(specs)
        codes = rules.codes()
        raised = False
        try:
            bad = loop.play_rounds(seeds, players, codes, pols, out)
        except Exception:
            raised = True

            def run(lo, hi):
                part = np.zeros((hi - lo, loop.ROUND_COLS), dtype=np.int64)
                return _raises(lambda: loop.play_rounds(seeds[lo:hi], players, codes, pols, part))

            bad = _first_failing(run, len(seeds))
        if bad >= 0:
            _python_rounds(specs, seeds[bad:bad + 1], rules, np.zeros((1, loop.ROUND_COLS), dtype=np.int64),
                           fault_dir, first_index=int(bad))
            raise _unreproduced(specs, int(seeds[bad]), None if raised else out[bad])
        return out
    _python_rounds(specs, seeds, rules, out, fault_dir)
    return out


def _unreproduced(specs, seed, row) -> AgentFault:
    """A compiled-loop fault that the Python replay did not reproduce (a nondeterministic policy)."""
    if row is None:
        return AgentFault(f"a compiled policy raised in the compiled loop at seed {seed}, but a replay played "
                          "without fault (is the policy deterministic?)", agent="?", seat=-1, seed=seed, match=None,
                          round=-1, turn=-1, action=None, path=None)
    seat = int(row[loop.C_BAD_SEAT])
    name = specs[seat].name if 0 <= seat < len(specs) else "?"
    act = int(row[loop.C_BAD_ACTION])
    text = action_text(act) if 0 <= act < L.N_ACTIONS else str(act)
    turn = int(row[loop.C_TURNS]) - 1
    return AgentFault(f"agent {name!r} (seat {seat}) stopped the compiled loop (status {int(row[loop.C_STATUS])}, "
                      f"action {text}) at seed {seed}, turn {turn}, but a replay played the round without fault "
                      "(is the policy deterministic?)", agent=name, seat=seat, seed=seed, match=None,
                      round=int(row[loop.C_MATCH_ROUND]), turn=turn, action=text, path=None)


def _python_rounds(specs, seeds, rules, out, fault_dir, first_index: int = 0) -> None:
    players = len(specs)
    table = _Table(specs, rules, fault_dir)
    table.new_match(players)
    seat_map = list(range(players))
    seat_map_arr = np.arange(L.MAX_SEATS, dtype=np.int64)
    scores = (0,) * players
    first_dealer = loop.first_dealer
    for i, seed in enumerate(seeds.tolist()):
        dealer = first_dealer(seed, players)
        f = table.play(seed, players, dealer, seat_map, scores)
        if f is not None:
            raise table.fault(f, seed, players, dealer, seat_map, match=None,
                              round=first_index + i) from f.exc
        _write_row(table.st, seed, seat_map_arr, out, i, -1, -1)


# --- matches ---------------------------------------------------------------------------------

def play_matches(agents, match_seeds, rules: RuleSet | str, match_base: int = 0, *, fault_dir=None,
                 engine: str = "auto") -> tuple[np.ndarray, np.ndarray]:
    """One match per seed under ``rules.match`` (to_25, rounds:N, eliminate_25), ``agents``
    by match seat, the deal passing left after every round. Returns (round rows, match
    rows): round rows in order with C_* columns (C_MATCH = match_base + index), match rows
    with M_* columns. A misbehaving agent raises :class:`AgentFault`."""
    rules = parse_rules(rules)
    specs = _specs(agents)
    players = len(specs)
    rules.check_players(players)
    seeds = np.ascontiguousarray(match_seeds, dtype=np.int64).reshape(-1)
    kind, n_rounds = MATCH_KINDS[rules.match_kind], rules.match_rounds
    matches_out = np.zeros((len(seeds), loop.MATCH_COLS), dtype=np.int64)
    if len(seeds) == 0:
        return np.zeros((0, loop.ROUND_COLS), dtype=np.int64), matches_out
    if not _engine(specs, engine):
        return _python_matches(specs, seeds, rules, match_base, matches_out, fault_dir), matches_out
    pols = policies_tuple(specs)
    codes = rules.codes()
    bound = max_match_rounds(rules, players)
    per_call = max(1, _ROWS_PER_CALL // bound)
    parts = []
    for lo in range(0, len(seeds), per_call):
        hi = min(lo + per_call, len(seeds))
        buf = np.zeros(((hi - lo) * bound, loop.ROUND_COLS), dtype=np.int64)
        fault_m, fault_row = None, None
        try:
            n = loop.play_matches(seeds[lo:hi], players, codes, kind, n_rounds, pols, buf, matches_out[lo:hi],
                                  match_base + lo)
        except Exception:
            def run(a, b):
                rb = np.zeros(((b - a) * bound, loop.ROUND_COLS), dtype=np.int64)
                mb = np.zeros((b - a, loop.MATCH_COLS), dtype=np.int64)
                return _raises(lambda: loop.play_matches(seeds[lo + a:lo + b], players, codes, kind, n_rounds, pols,
                                                         rb, mb, 0))

            fault_m = lo + _first_failing(run, hi - lo)
        else:
            if n < 0:
                fault_row = buf[-(n + 1)]
                fault_m = int(fault_row[loop.C_MATCH]) - match_base
        if fault_m is not None:
            # replay the faulty match through the Python loop: it raises the AgentFault
            _python_matches(specs, seeds[fault_m:fault_m + 1], rules, match_base + fault_m,
                            np.zeros((1, loop.MATCH_COLS), dtype=np.int64), fault_dir)
            raise _unreproduced(specs, int(seeds[fault_m]), fault_row)
        parts.append(buf[:n])
    return np.concatenate(parts), matches_out


def _python_matches(specs, seeds, rules, match_base, matches_out, fault_dir) -> np.ndarray:
    players = len(specs)
    kind, n_rounds = MATCH_KINDS[rules.match_kind], rules.match_rounds
    table = _Table(specs, rules, fault_dir)
    rows = []
    out = np.zeros((max_match_rounds(rules, players), loop.ROUND_COLS), dtype=np.int64)
    seat_map_arr = np.zeros(L.MAX_SEATS, dtype=np.int64)
    for m, mseed in enumerate(seeds.tolist()):
        totals = np.zeros(players, dtype=np.int64)
        active = np.ones(players, dtype=np.bool_)
        last_active = active.copy()
        dealer = int(loop.first_dealer(mseed, players))
        table.new_match(players)
        r = 0
        while True:
            seat_map = [s for s in range(players) if active[s]]
            k = len(seat_map)
            round_dealer = seat_map.index(dealer)
            seed = int(derive(mseed, loop.ROUND_STREAM + r))
            scores = tuple(int(totals[s]) for s in seat_map)
            f = table.play(seed, k, round_dealer, seat_map, scores)
            if f is not None:
                raise table.fault(f, seed, k, round_dealer, seat_map, match=match_base + m, round=r,
                                  match_seed=mseed) from f.exc
            seat_map_arr[:k] = seat_map
            _write_row(table.st, seed, seat_map_arr, out, r, match_base + m, r)
            rows.append(out[r].copy())
            r += 1
            for s in range(k):
                totals[seat_map[s]] += table.st[L.PENALTY + s]
            last_active[:] = active
            if loop.match_over(kind, n_rounds, r, totals, active, players):
                break
            dealer = (dealer + 1) % players
            while not active[dealer]:
                dealer = (dealer + 1) % players
        matches_out[m, loop.M_SEED] = mseed
        matches_out[m, loop.M_ROUNDS] = r
        matches_out[m, loop.M_WINNERS] = loop.match_winners(kind, totals, active, last_active, players)
        for s in range(L.MAX_SEATS):
            matches_out[m, loop.M_TOTAL + s] = totals[s] if s < players else -1
    if not rows:
        return np.zeros((0, loop.ROUND_COLS), dtype=np.int64)
    return np.array(rows, dtype=np.int64)


# --- records ---------------------------------------------------------------------------------

def record_round(agents, seed: int, rules: RuleSet | str, *, dealer: int | None = None, seat_map=None,
                 match: int = 0, round: int = 0, scores=None, fault_dir=None) -> dict:
    """Play one round from ``seed`` (any mix of agents) and return its game record
    (docs/formats.md). ``agents`` are by match seat; ``seat_map`` (default: all, in order) picks
    the round's seats; ``dealer`` is a round seat (default: drawn from the seed, as in
    :func:`play_rounds`). Python agents start fresh (new_match, then new_round)."""
    rules = parse_rules(rules)
    specs = _specs(agents)
    seat_map = list(range(len(specs))) if seat_map is None else [int(s) for s in seat_map]
    k = len(seat_map)
    rules.check_players(k)
    seed = int(seed)
    dealer = int(loop.first_dealer(seed, k)) if dealer is None else int(dealer)
    if not 0 <= dealer < k:
        raise UserError(f"bad dealer {dealer}: expected a seat from 0 to {k - 1}")
    table = _Table(specs, rules, fault_dir)
    table.new_match(len(specs))
    scores = tuple(scores) if scores is not None else (0,) * k
    f = table.play(seed, k, dealer, seat_map, scores)
    if f is not None:
        raise table.fault(f, seed, k, dealer, seat_map, match=None, round=round) from f.exc
    return table.record(seed, k, dealer, seat_map, match=match, round=round)


def record_row(agents, row, rules: RuleSet | str, *, fault_dir=None) -> dict:
    """The game record of a round row from :func:`play_rounds` or :func:`play_matches`
    (``agents`` by match seat, as passed there): the round is replayed from the row's seed."""
    row = np.asarray(row)
    seat_map = [s for s in range(L.MAX_SEATS) if row[loop.C_PENALTY + s] >= 0]
    dealer = seat_map.index(int(row[loop.C_DEALER]))
    match = int(row[loop.C_MATCH])
    return record_round(agents, int(row[loop.C_SEED]), rules, dealer=dealer, seat_map=seat_map,
                        match=max(match, 0), round=max(int(row[loop.C_MATCH_ROUND]), 0), fault_dir=fault_dir)
