"""Acting for training, in compiled code: whole rounds between compiled kc-sim policies and
action-scoring networks (:mod:`kc_sim.net.policy`), recording the learner seats' decisions.

:func:`play_and_record` deals rounds from given seeds exactly as the tournament runner does
(dealer and policy memories from the round seed) and plays them to the end. Each seat is

* a compiled kc-sim policy (``kind`` 0): ``greedy``, ``planner``, any compiled agent; or
* a network (``kind`` 1): a row of ``nets`` (so past checkpoints can sit at the table: a
  league), choosing by ``temperature`` (0: the best-scored action; > 0: a draw from
  softmax(q / temperature)), with probability ``epsilon`` a uniformly random legal action.

At each decision of a *learner* seat with more than one legal action it records the context,
every legal action's features (:mod:`kc_sim.net.features`), the action chosen and its
probability under the acting policy, and, with a ``teacher`` policy, the action the teacher
would play from this position (called with a fresh memory, so a planning teacher plans from
here: the label of behaviour cloning and DAgger). With ``teacher_acts`` > 0 the learner
plays the teacher's action with that probability (0: the network acts, DAgger; 1: the teacher
plays, plain behaviour cloning). At the end of each round every seat's penalty is kept.

Everything random comes from the core's generator in ``rng[0]`` (splitmix64), so the same
seeds, nets and generator state record the same decisions.
"""

from __future__ import annotations

import numba as nb
import numpy as np
from numba import types

from kc_sim.core import layout as L
from kc_sim.core.legal import is_legal
from kc_sim.core.loop import MAX_DECISIONS, POLICIES_TYPE, seed_policies
from kc_sim.core.policy import MEM_SIZE, POLICY_TYPE, compiling
from kc_sim.core.rng import next_u64
from kc_sim.core.step import apply, deal, first_dealer
from kc_sim.net.features import F_ACT, F_CTX, WS_SIZE
from kc_sim.net.policy import scores
from kc_sim.support.lazy import OnFirstUse

__all__ = ["Buffers", "play_and_record", "record", "MAX_ROW_ACTIONS"]

#: the most legal actions one decision may have (two decks, eight seats stay far below)
MAX_ROW_ACTIONS = L.N_ACTIONS
#: a round records at most this many decisions and action rows (checked before each round)
_ROUND_DECISIONS = 1200
_ROUND_ROWS = 20000

# status codes
OK, BAD_ACTION, TOO_LONG = 0, 1, 2


@nb.njit(cache=True, inline="always")
def _uniform(rng):
    """A uniform float in [0, 1) from the generator in rng[0]."""
    return (next_u64(rng, 0) >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@nb.njit(cache=True, inline="always")
def _choose(q, n, temperature, epsilon, rng, probs):
    """Index of the action played among the n scored ones, and its probability."""
    best = 0
    for i in range(1, n):
        if q[i] > q[best]:
            best = i
    if temperature > 0.0:
        total = 0.0
        for i in range(n):
            probs[i] = np.exp((q[i] - q[best]) / temperature)
            total += probs[i]
        for i in range(n):
            probs[i] = probs[i] / total
    else:
        for i in range(n):
            probs[i] = 0.0
        probs[best] = 1.0
    if epsilon > 0.0:
        for i in range(n):
            probs[i] = (1.0 - epsilon) * probs[i] + epsilon / n
    u = _uniform(rng)
    acc = 0.0
    for i in range(n):
        acc += probs[i]
        if u < acc:
            return i, probs[i]
    return n - 1, probs[n - 1]


@nb.njit(cache=True, inline="always")
def _index_of(acts, n, a):
    """The index of action ``a`` among the ``n`` scored ones (the last if twice), -1 if absent."""
    i = -1
    for j in range(n):
        if acts[j] == a:
            i = j
    return i


@nb.njit(cache=True, inline="always")
def _store(ctx_out, x_out, d_start, d_n, d_chosen, d_label, d_prob, d_round, d_seat, nd, nr,
           ctx, xs, n, i, label, pr, r, s):
    """Record decision ``nd`` (its action rows from ``nr``): the context, the ``n`` actions'
    features, the choice ``i``, the teacher's ``label``, its probability, round and seat."""
    for k in range(F_CTX):
        ctx_out[nd, k] = ctx[k]
    for j in range(n):
        for k in range(F_ACT):
            x_out[nr + j, k] = xs[j, k]
    d_start[nd] = nr
    d_n[nd] = n
    d_chosen[nd] = i
    d_label[nd] = label
    d_prob[nd] = pr
    d_round[nd] = r
    d_seat[nd] = s


@nb.njit(cache=True, inline="always")
def _stopped(counts, rounds, nd, nr, status):
    """Note the rounds played, decisions and action rows recorded and the status in ``counts``."""
    counts[0] = rounds
    counts[1] = nd
    counts[2] = nr
    counts[3] = status
    return status


def _play_and_record(seeds, players, rules, policies, kind, nets, net_of, learner, temperature, epsilon,
                     teacher, use_teacher, teacher_acts, rng,
                     ctx_out, x_out, d_start, d_n, d_chosen, d_label, d_prob, d_round, d_seat, penalties, counts):
    """Play round i from ``seeds[i]`` for i = 0, 1, ... until the buffers could overflow; see the
    module doc. ``counts`` gets (rounds played, decisions recorded, action rows, status, the
    bad seat, the bad action). Returns the status (OK, BAD_ACTION of a policy, TOO_LONG)."""
    st = np.zeros(L.STATE_SIZE, np.int64)
    mem = np.zeros((L.MAX_SEATS, MEM_SIZE), np.int64)
    tmem = np.zeros(MEM_SIZE, np.int64)
    ws = np.zeros(WS_SIZE, np.int64)
    ctx = np.zeros(F_CTX, np.float32)
    acts = np.zeros(MAX_ROW_ACTIONS, np.int64)
    xs = np.zeros((MAX_ROW_ACTIONS, F_ACT), np.float32)
    q = np.zeros(MAX_ROW_ACTIONS, np.float32)
    probs = np.zeros(MAX_ROW_ACTIONS, np.float64)
    nd = 0
    nr = 0
    D = d_start.shape[0]
    A = x_out.shape[0]
    for r in range(seeds.shape[0]):
        if nd + _ROUND_DECISIONS > D or nr + _ROUND_ROWS > A:
            return _stopped(counts, r, nd, nr, OK)
        seed = seeds[r]
        deal(st, seed, players, first_dealer(seed, players), rules)
        seed_policies(mem, seed, players)
        for _ in range(MAX_DECISIONS):
            if st[L.DONE]:
                break
            s = st[L.SEAT]
            if kind[s] == 0 and not learner[s]:
                a = policies[s](st, s, mem[s])
            else:
                n = scores(st, s, nets[net_of[s]], ws, ctx, acts, xs, q)
                if kind[s] == 0:              # a policy plays a learner seat: it is the teacher
                    a = policies[s](st, s, mem[s])
                    i = _index_of(acts, n, a)
                    pr, label = 1.0, i
                elif n == 1:
                    a, i, pr, label = acts[0], 0, 1.0, -1
                else:
                    i, pr = _choose(q, n, temperature[s], epsilon[s], rng, probs)
                    a, label = acts[i], -1
                    if learner[s] and use_teacher:
                        tmem[:] = 0
                        tmem[0] = mem[s, 0]
                        t = teacher(st, s, tmem)
                        label = _index_of(acts, n, t)
                        if label >= 0 and teacher_acts > 0.0 and _uniform(rng) < teacher_acts:
                            i = label
                            a = t
                            pr = probs[i]
                if learner[s] and n > 1 and i >= 0:
                    _store(ctx_out, x_out, d_start, d_n, d_chosen, d_label, d_prob, d_round, d_seat, nd, nr,
                           ctx, xs, n, i, label, pr, r, s)
                    nd += 1
                    nr += n
            if not is_legal(st, a):
                counts[4] = s
                counts[5] = a
                return _stopped(counts, r, nd, nr, BAD_ACTION)
            apply(st, a)
        if not st[L.DONE]:
            counts[0] = r
            counts[3] = TOO_LONG
            return TOO_LONG
        for s in range(players):
            penalties[r, s] = st[L.PENALTY + s]
    return _stopped(counts, seeds.shape[0], nd, nr, OK)


I1 = types.int64[::1]
F1 = types.float32[::1]
F2 = types.float32[:, ::1]
_SIG = types.int64(I1, types.int64, I1, POLICIES_TYPE, I1, F2, I1, I1, types.float64[::1], types.float64[::1],
                   POLICY_TYPE, types.boolean, types.float64, I1,
                   F2, F2, I1, I1, I1, I1, F1, I1, I1, types.int64[:, ::1], I1)


def _compile():
    with compiling():
        f = nb.njit(cache=True, nogil=True)(_play_and_record)   # acts beside the learner
        f.compile(_SIG)
        f.disable_compile()
    return f


#: the acting loop, compiled (or loaded from the cache) on first use
_KERNEL = OnFirstUse({"play_and_record": _compile})


class Buffers:
    """Preallocated arrays a :func:`record` call fills (sized for ``decisions`` decisions and
    ``rows`` action rows; ``rounds`` round results)."""

    def __init__(self, decisions: int, rows: int, rounds: int):
        self.ctx = np.zeros((decisions, F_CTX), np.float32)
        self.x = np.zeros((rows, F_ACT), np.float32)
        self.start = np.zeros(decisions, np.int64)
        self.n = np.zeros(decisions, np.int64)
        self.chosen = np.zeros(decisions, np.int64)
        self.label = np.zeros(decisions, np.int64)
        self.prob = np.zeros(decisions, np.float32)
        self.round = np.zeros(decisions, np.int64)
        self.seat = np.zeros(decisions, np.int64)
        self.penalties = np.zeros((rounds, L.MAX_SEATS), np.int64)
        self.counts = np.zeros(6, np.int64)


def record(bufs: Buffers, seeds, players: int, rules_codes, policies, kind, nets, net_of, learner, temperature,
           epsilon, teacher, teacher_acts: float, rng) -> tuple[int, int, int]:
    """:func:`_play_and_record` into ``bufs``: returns (rounds played, decisions, action rows).
    ``teacher`` is a compiled policy or None. A bad policy action raises RuntimeError."""
    f = _KERNEL["play_and_record"]
    use_teacher = teacher is not None
    status = f(np.ascontiguousarray(seeds, dtype=np.int64), np.int64(players), rules_codes, policies,
               kind, nets, net_of, learner, temperature, epsilon, teacher if use_teacher else policies[0],
               use_teacher, float(teacher_acts), rng, bufs.ctx, bufs.x, bufs.start, bufs.n, bufs.chosen, bufs.label,
               bufs.prob, bufs.round, bufs.seat, bufs.penalties, bufs.counts)
    c = bufs.counts
    if status == BAD_ACTION:
        raise RuntimeError(f"seat {int(c[4])} played the illegal action {int(c[5])} in a training round")
    if status == TOO_LONG:
        raise RuntimeError("a training round did not end")
    return int(c[0]), int(c[1]), int(c[2])


play_and_record = _play_and_record
