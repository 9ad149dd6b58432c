"""The compiled round and match loops: whole rounds for a batch of seeds, without
returning to Python between decisions.

The loops are written once, as the plain functions ``_play_round``, ``_play_rounds`` and
``_play_matches``, and compiled by numba for the type of their ``policies`` argument
(:mod:`kc_sim.core.policy_set` says what each type does):

* ``round_loop``, ``rounds_loop`` and ``matches_loop`` compile on first use for each type
  they meet: a :class:`~kc_sim.core.policy_set.Seated` value gives the loop compiled for its
  set of policies (kept in numba's cache under that set), a tuple of 8 compiled policies
  the generic one;
* ``play_round``, ``play_rounds`` and ``play_matches`` are the generic loops with their
  one signature (the tuple of ``POLICIES_TYPE``, so numba turns the compiled policies a
  Python caller passes into function pointers), compiled on first use of the name or by
  :func:`compile_generic`; importing this module compiles nothing.

``seat_map`` maps a round seat to a match seat (they differ only after an elimination under
match=eliminate_25). The round loop is a kernel (:mod:`kc_sim.core.kernel`): no reference
counting; the rules and steps it uses are compiled into it.
"""

import numba as nb
import numpy as np
from numba import types

from kc_sim.core import legal, step
from kc_sim.core.draw_luck import deal_with_terms, terms_before_stop, write_luck
from kc_sim.core.kernel import kernel
from kc_sim.core.layout import (
    ACTIONS,
    DEALER,
    DONE,
    DREW,
    END,
    FIRST,
    MAX_SEATS,
    PENALTY,
    PLAYERS,
    SEAT,
    STATE_SIZE,
    STOCK_LEN,
    STOCK_POS,
    STOP,
    TURNS,
    WINNER,
)
from kc_sim.core.match import (
    add_round,
    match_winners,
    pass_deal,
    round_seed,
    seat_round,
    write_match,
)
from kc_sim.core.policy import MEM_SIZE, SEAT_STREAM, compiling, seed_policies  # noqa: F401 - re-exported
from kc_sim.core.policy_set import POLICIES_TYPE, call_policy, checks, seed_seats
from kc_sim.core.rows import (  # noqa: F401 - callers read loop.C_*
    C_ACTIONS,
    C_BAD_ACTION,
    C_BAD_SEAT,
    C_DEALER,
    C_LUCK,
    C_END,
    C_FIRST,
    C_MATCH,
    C_MATCH_ROUND,
    C_PENALTY,
    C_SEED,
    C_STATUS,
    C_STOCK_LEFT,
    C_TURNS,
    C_WINNER,
    M_ROUNDS,
    M_SEED,
    M_TOTAL,
    LUCK_ROUND_COLS,
    LUCK_SCALE,
    M_WINNERS,
    MATCH_COLS,
    N_LUCK,
    ROUND_COLS,
    STATUS_ILLEGAL,
    STATUS_OK,
    STATUS_TOO_LONG,
)
from kc_sim.core.step import apply, deal, first_dealer, stop
from kc_sim.core.views import row_view
from kc_sim.support.lazy import OnFirstUse

# Why 20000: a legal round cannot come near it. Every card is placed at most once
# (52 * decks placements), a pile move needs a non-empty side and only a placement on an
# empty side makes one (4 + 52 * decks moves), the stock gives at most 52 * decks draws,
# and a turn with no action and no draw is idle: ``players`` of them in a row end the
# round blocked. So a round has at most (actions + draws + 1) * players turns, about
# 2,300 decisions with two decks and 8 seats (620 with one deck and 4). The cap only
# catches a broken policy or core bug (STATUS_TOO_LONG) instead of hanging a run.
MAX_DECISIONS = 20000

# Log events written by play_round when given a log array. The log is one int64 array
# so it stays in compiled code; an entry below N_ACTIONS (449) is an action id, and the
# turn events are put in ranges of their own above it so one integer says both what
# happened and its argument:
LOG_TURN = 1000           # LOG_TURN + seat: a turn opens (the events that follow are that turn's)
LOG_CLOSE = 2000          # LOG_CLOSE + drawn card + 1 (+0: nothing drawn): the turn is over

I1 = types.int64[::1]


@nb.njit(cache=True, inline="always")
def log_event(log, n, ev):
    """Append ``ev`` at ``log[n]`` unless the log is empty (logging off); the new length."""
    if log.shape[0] == 0:
        return n
    log[n] = ev
    return n + 1


@kernel
def play_action(st, a, log, n):
    """Apply the legal action ``a`` of the seat to act, appending its events to the log
    (the action; after a stop, the turn's close with its draw and the next turn's open;
    after the last card, the close). Returns the new log length."""
    n = log_event(log, n, a)
    if a == STOP:
        n = log_event(log, n, LOG_CLOSE + stop(st) + 1)
        if not st[DONE]:
            n = log_event(log, n, LOG_TURN + st[SEAT])
    else:
        apply(st, a)
        if st[DONE]:
            n = log_event(log, n, LOG_CLOSE + st[DREW] + 1)
    return n


# The legality check and the step of every decision, compiled inline into the round loop:
# the very functions of kc_sim.core.legal and kc_sim.core.step (as kc_sim.core.ids does with
# the id table), so the rule stays in one place. As calls (each taking and dropping the
# state's reference count) they made greedy self-play 9% slower in this loop and 10% in a
# specialised one, measured side by side; inline, LLVM also shares the action's decoding
# between the two. The cost: play_round compiles about 0.5 s longer from an empty cache.
is_legal_inline = nb.njit(inline="always")(legal.is_legal.py_func)
apply_inline = nb.njit(inline="always")(step.apply.py_func)


# --- the loops, written once (see the module docstring) ---------------------------------------

def _play_round(st, policies, seat_map, mem, log, luck):
    """Play a dealt round to its end. ``log`` (an array, may be empty; or None: no events)
    receives the turn events and action ids for game records; ``luck`` (a (MAX_SEATS,
    N_LUCK) float array, or None: not computed, compiled out) the draw control variates
    (:mod:`kc_sim.core.draw_luck`). Returns (status, bad action, log length)."""
    n = 0
    if log is not None:
        n = log_event(log, 0, LOG_TURN + st[SEAT])
    for _ in range(MAX_DECISIONS):
        if st[DONE]:
            return STATUS_OK, -1, n
        seat = st[SEAT]
        k = seat_map[seat]
        a = call_policy(policies, k, st, seat, row_view(mem, seat))
        if checks(policies, k) and not is_legal_inline(st, a):
            return STATUS_ILLEGAL, a, n
        if luck is not None and a == STOP:
            terms_before_stop(st, luck)
        if log is not None:
            n = play_action(st, a, log, n)
        else:
            apply_inline(st, a)  # the same step, without events
    return STATUS_TOO_LONG, -1, n


#: the round loop, compiled on first use for each type of ``policies`` (and of ``log``)
round_loop = kernel(_play_round)


@kernel
def write_round(st, seed, seat_map, status, bad, out, row):
    """Write one round's figures into ``out[row]`` (penalties by match seat)."""
    out[row, C_SEED] = seed
    out[row, C_DEALER] = seat_map[st[DEALER]]
    out[row, C_FIRST] = seat_map[st[FIRST]]
    out[row, C_WINNER] = seat_map[st[WINNER]] if st[WINNER] >= 0 else -1
    out[row, C_END] = st[END]
    out[row, C_TURNS] = st[TURNS]
    out[row, C_ACTIONS] = st[ACTIONS]
    out[row, C_STOCK_LEFT] = st[STOCK_LEN] - st[STOCK_POS]
    out[row, C_STATUS] = status
    out[row, C_BAD_ACTION] = bad
    out[row, C_BAD_SEAT] = seat_map[st[SEAT]] if status != STATUS_OK else -1
    for s in range(MAX_SEATS):
        out[row, C_PENALTY + s] = -1
    for s in range(st[PLAYERS]):
        out[row, C_PENALTY + seat_map[s]] = st[PENALTY + s]


def _rounds(seeds, players, rules, policies, out, luck):
    """Play one independent round per seed (dealer drawn from the seed); one row each in
    ``out``. ``luck``: None, or a (MAX_SEATS, N_LUCK) float scratch array: then the draw
    control variates are computed and written to ``out``'s luck columns (``rows.C_LUCK``).
    Returns the index of a round stopped by a bad policy, or -1."""
    st = np.zeros(STATE_SIZE, dtype=np.int64)
    mem = np.zeros((MAX_SEATS, MEM_SIZE), dtype=np.int64)
    seat_map = np.zeros(MAX_SEATS, dtype=np.int64)   # the identity (np.arange would be one more compile)
    for s in range(MAX_SEATS):
        seat_map[s] = s
    for i in range(seeds.shape[0]):
        if luck is None:
            deal(st, seeds[i], players, first_dealer(seeds[i], players), rules)
        else:
            deal_with_terms(st, seeds[i], players, first_dealer(seeds[i], players), rules, luck)
        seed_seats(policies, mem, seeds[i], players)
        status, bad, _ = round_loop(st, policies, seat_map, mem, None, luck)
        write_round(st, seeds[i], seat_map, status, bad, out, i)
        if luck is not None:
            write_luck(luck, seat_map, players, out, i)
        out[i, C_MATCH] = -1
        out[i, C_MATCH_ROUND] = -1
        if status != STATUS_OK:
            return i
    return -1


def _play_matches(seeds, players, rules, kind, n_rounds, policies, rounds_out, matches_out, match_base):
    """Play one match per seed under the match switch (``kind`` a ``MatchKind``), dealt,
    seated and scored by the match rule (``kc_sim.core.match``). Round rows go to
    ``rounds_out`` in order (its length must allow every round); returns the number of
    round rows written, or -(1 + row) of a round stopped by a bad policy."""
    st = np.zeros(STATE_SIZE, dtype=np.int64)
    mem = np.zeros((MAX_SEATS, MEM_SIZE), dtype=np.int64)
    # counters start as np.int64(0), not 0: a literal 0 would have numba compile deal,
    # seed_policies, write_round and add_round once more for the literal type (seconds)
    row = np.int64(0)
    for m in range(seeds.shape[0]):
        totals = np.zeros(players, dtype=np.int64)
        active = np.ones(players, dtype=np.bool_)
        last_active = np.ones(players, dtype=np.bool_)
        dealer = first_dealer(seeds[m], players)
        r = np.int64(0)
        while True:
            seat_map = np.zeros(MAX_SEATS, dtype=np.int64)
            k, round_dealer = seat_round(active, players, dealer, seat_map)
            seed = round_seed(seeds[m], r)
            deal(st, seed, k, round_dealer, rules)
            seed_seats(policies, mem, seed, k)
            status, bad, _ = round_loop(st, policies, seat_map, mem, None, None)
            write_round(st, seed, seat_map, status, bad, rounds_out, row)
            rounds_out[row, C_MATCH] = match_base + m
            rounds_out[row, C_MATCH_ROUND] = r
            if status != STATUS_OK:
                return -(1 + row)
            row += 1
            r += 1
            if add_round(kind, n_rounds, r, totals, active, last_active, seat_map, st[PENALTY:PENALTY + k], k,
                         players):
                break
            dealer = pass_deal(dealer, active, players)
        write_match(matches_out[m], seeds[m], r, match_winners(kind, totals, active, last_active, players), totals,
                    players)
    return row


#: numba's options for the round and match loops: they release the GIL while they play (they
#: touch no Python object), so the threads of the process that called them go on meanwhile -
#: the ones that hand chunks to the worker processes and take their results, and the watchdog
LOOP_OPTIONS = {"cache": True, "nogil": True}
#: the rounds loop's body, compiled for each type of ``policies`` and of ``luck``
rounds_body = nb.njit(**LOOP_OPTIONS)(_rounds)


def _play_rounds(seeds, players, rules, policies, out):
    return rounds_body(seeds, players, rules, policies, out, None)


def _play_rounds_luck(seeds, players, rules, policies, out, luck):
    return rounds_body(seeds, players, rules, policies, out, luck)


#: the round and match loops, compiled on first use for each type of ``policies``; the rounds
#: loop with the draw control variates (``luck`` a (MAX_SEATS, N_LUCK) float64 scratch array)
rounds_loop = nb.njit(**LOOP_OPTIONS)(_play_rounds)
rounds_luck_loop = nb.njit(**LOOP_OPTIONS)(_play_rounds_luck)
matches_loop = nb.njit(**LOOP_OPTIONS)(_play_matches)
#: each mode's loop
LOOPS = {"rounds": rounds_loop, "matches": matches_loop, "rounds_luck": rounds_luck_loop}


def round_sig(policies_type, log_type=I1):
    """The signature of ``play_round`` with policies of type ``policies_type``."""
    return types.UniTuple(types.int64, 3)(I1, policies_type, I1, types.int64[:, ::1], log_type)


def rounds_sig(policies_type):
    """The signature of ``play_rounds`` with policies of type ``policies_type``."""
    return types.int64(I1, types.int64, I1, policies_type, types.int64[:, ::1])


def rounds_luck_sig(policies_type):
    """The signature of ``play_rounds_luck`` (``play_rounds`` with the luck scratch array)."""
    return types.int64(I1, types.int64, I1, policies_type, types.int64[:, ::1], types.float64[:, ::1])


def matches_sig(policies_type):
    """The signature of ``play_matches`` with policies of type ``policies_type``."""
    return types.int64(I1, types.int64, I1, types.int64, types.int64, policies_type,
                       types.int64[:, ::1], types.int64[:, ::1], types.int64)


# --- the generic loops: policies through function pointers ------------------------------------
#
# Each is the loop above called with the policy tuple, behind one fixed signature: a Python
# caller's compiled policies become function pointers there, and any other argument types
# are refused rather than compiled for. Compiled (or loaded from numba's cache) on first use
# of ``loop.play_round``, ``loop.play_rounds`` or ``loop.play_matches`` (attribute or ``from
# kc_sim.core.loop import ...``) through the module's ``__getattr__``, not on import: a round
# tournament never needs play_matches, and each compile is seconds from an empty cache.

def _generic_round(st, policies, seat_map, mem, log):
    return round_loop(st, policies, seat_map, mem, log, None)


def _generic_rounds(seeds, players, rules, policies, out):
    return rounds_loop(seeds, players, rules, policies, out)


def _generic_rounds_luck(seeds, players, rules, policies, out, luck):
    return rounds_luck_loop(seeds, players, rules, policies, out, luck)


def _generic_matches(seeds, players, rules, kind, n_rounds, policies, rounds_out, matches_out, match_base):
    return matches_loop(seeds, players, rules, kind, n_rounds, policies, rounds_out, matches_out, match_base)


def _compiled_generic(entry, sig):
    """``entry`` compiled with its one signature (policies as ``POLICIES_TYPE``), compiling
    then disabled: a call with other types is refused rather than compiled for."""
    fn = nb.njit(**LOOP_OPTIONS)(entry)
    with compiling():
        fn.compile(sig(POLICIES_TYPE))
    fn.disable_compile()
    return fn


#: the generic loops by name, each compiled (or loaded from the cache) on first use, once per
#: process; the module's ``__getattr__`` reads them, so ``loop.play_rounds`` is one of them
GENERIC = OnFirstUse({
    "play_round": lambda: _compiled_generic(_generic_round, round_sig),
    "play_rounds": lambda: _compiled_generic(_generic_rounds, rounds_sig),
    "play_rounds_luck": lambda: _compiled_generic(_generic_rounds_luck, rounds_luck_sig),
    "play_matches": lambda: _compiled_generic(_generic_matches, matches_sig),
})
_GENERIC_OF_MODE = {"rounds": "play_rounds", "matches": "play_matches"}


def compile_generic(mode):
    """Compile (or load from numba's cache) the generic loop of ``mode`` (``"rounds"``:
    ``play_rounds``, ``"matches"``: ``play_matches``); returns it. Cheap once done in this
    process."""
    if mode not in _GENERIC_OF_MODE:
        raise ValueError(f"bad mode {mode!r}: expected 'rounds' or 'matches'")
    return GENERIC[_GENERIC_OF_MODE[mode]]


def __getattr__(name):
    if name in GENERIC:
        return GENERIC[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
