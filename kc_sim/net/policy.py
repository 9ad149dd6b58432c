"""A trained action-scoring network evaluated in compiled code, and as a kc-sim compiled policy.

The network scores each legal action from the features of :mod:`kc_sim.net.features`:

    hc = ctx @ Wc                              once per decision (ctx holds a bias feature)
    h1 = relu(hc + x_a @ Wa)                   per legal action a, x_a its features
    h2 = relu(h1 @ W2 + b2)                    if the net has a second hidden layer (H2 > 0)
    q_a = h @ w_out + b_out                    h the last hidden layer

and the policy plays the action of highest ``q`` (the first in the order of
:func:`kc_sim.net.features.legal_actions` among equals). A decision with nothing to place or
move is a stop, with no network evaluation. The cost is about ``(F_ACT + H2) x H1``
multiply-adds per legal action: a few thousand per decision for ``H1 = 32``.

Parameters are one flat float32 vector (:func:`param_size`, :func:`unpack`):
``[H1, H2, Wc (F_CTX x H1), Wa (F_ACT x H1), W2 (H1 x H2), b2 (H2), w_out (H), b_out]``, the
matrices row-major (input rows), so the torch model (:class:`kc_sim.learn.qnet.QNet`) and this code
read the same numbers.

**As a kc-sim policy.** A compiled policy has the fixed signature ``policy(state, seat, mem)``
(``kc_sim.core.policy.POLICY_SIG``), so it cannot take the weights as an argument; compiling the
weights in as constants would cost a compile per model and could not be cached. Instead the
weights are data in one of ``N_SLOTS`` process-wide slots: a table of (address, length) that
compiled code reaches through one external symbol (registered with llvmlite when this module is
imported, so numba's disk cache stays valid in every process), and ``slot_policy(k)`` is the
compiled policy that plays the weights in slot ``k``. :func:`load_slot` puts a parameter
vector in a slot (keeping the array alive). One compile serves every model.
"""

from __future__ import annotations

import threading

import llvmlite.binding as llvm
import numba as nb
import numpy as np
from llvmlite import ir
from numba import types
from numba.core.extending import intrinsic

from kc_sim.core import layout as L
from kc_sim.core.bits import lowest, popcount
from kc_sim.core.ids import id_pile, id_side
from kc_sim.core.kernel import kernel
from kc_sim.core.legal import move_mask, place_mask, stop_legal
from kc_sim.core.policy import POLICY_SIG, compiling
from kc_sim.net.features import (
    F_ACT,
    F_CTX,
    WS_SIZE,
    action_features,
    begin_decision,
    legal_actions,
)
from kc_sim.errors import UserError
from kc_sim.net.llvm_ops import DOT_LANES, add_rows, relu_dot_tree, stack_f32, stack_i64

__all__ = ["N_SLOTS", "TRAINING_SLOT", "param_size", "unpack", "scores", "forward_rows", "net_act", "load_slot", "slot_policy",
           "slot_params"]

#: parameter vectors held at once per process (distinct models in one tournament)
N_SLOTS = 16
#: the slot kept for a network under training (its evaluations load it again and again);
#: models loaded by name take the others
TRAINING_SLOT = N_SLOTS - 1
_SYMBOL = "kc_sim_net_policy_slots"
#: slot k: (address of its float32 parameters, their number); 0 when empty
_TABLE = np.zeros(2 * N_SLOTS, dtype=np.int64)
llvm.add_symbol(_SYMBOL, _TABLE.ctypes.data)
_held: dict[int, np.ndarray] = {}
_lock = threading.Lock()


def param_size(h1: int, h2: int = 0) -> int:
    """Length of the parameter vector of a net with hidden sizes ``h1`` and ``h2`` (0: one layer)."""
    h = h2 if h2 else h1
    return 2 + F_CTX * h1 + F_ACT * h1 + h1 * h2 + h2 + h + 1


def unpack(params: np.ndarray) -> dict:
    """The named arrays of a parameter vector (views): ``Wc``, ``Wa``, ``W2``, ``b2``, ``w_out``, ``b_out``."""
    h1, h2 = int(params[0]), int(params[1])
    h = h2 if h2 else h1
    out, at = {}, 2
    for name, shape in (("Wc", (F_CTX, h1)), ("Wa", (F_ACT, h1)), ("W2", (h1, h2)), ("b2", (h2,)), ("w_out", (h,)),
                        ("b_out", (1,))):
        n = int(np.prod(shape))
        out[name] = params[at:at + n].reshape(shape)
        at += n
    return out


# --- the forward pass ---------------------------------------------------------------------------

@nb.njit(cache=True, inline="always")
def _listed(v, n, pos):
    """The indices of the non-zero values among the first ``n`` of ``v``, into ``pos`` in
    ascending order, without a branch per value; returns their number."""
    k = 0
    for i in range(n):
        pos[k] = i
        k += v[i] != 0.0
    return k


@nb.njit(cache=True, inline="always")
def _context(params, ctx, hc, pos):
    """hc = ctx @ Wc (H1 values; float32 ``ctx`` and ``hc``, scratch ``pos``): the rows of the
    non-zero inputs added in input order."""
    h1 = np.int64(params[0])
    for j in range(h1):
        hc[j] = 0.0
    add_rows(hc, hc, 0, params, 2, h1, ctx, pos, _listed(ctx, F_CTX, pos), h1)


@nb.njit(cache=True, inline="always")
def _dot_relu(params, at, v, n):
    """sum_j relu(v[j]) * params[at + j] over j < n: the first ``n - n % DOT_LANES`` terms in
    the lanes of :func:`~kc_sim.net.llvm_ops.relu_dot_tree` (a fixed order, the same on every
    machine), then the last ``n % DOT_LANES`` added to that sum in order."""
    nl = n - n % DOT_LANES
    q = relu_dot_tree(v, params, at, nl)
    for j in range(nl, n):
        q += max(v[j], np.float32(0.0)) * params[at + j]
    return q


@nb.njit(cache=True, inline="always")
def _positive(v, n, pos):
    """The indices of the positive values among the first ``n`` of ``v``, into ``pos`` in
    ascending order, without a branch per value; returns their number."""
    k = 0
    for i in range(n):
        pos[k] = i
        k += v[i] > 0.0
    return k


@nb.njit(cache=True, inline="always")
def _score(params, hc, x, h, g, pos):
    """q of one action with features ``x``, given the decision's ``hc`` (scratch ``h``, ``g``,
    and ``pos``, int64[max(H1, F_ACT)]). Each layer adds the weight rows of its non-zero (for
    h, positive) inputs in input order, as a loop over the inputs would."""
    h1 = np.int64(params[0])
    h2 = np.int64(params[1])
    add_rows(h, hc, 0, params, 2 + F_CTX * h1, h1, x, pos, _listed(x, F_ACT, pos), h1)
    at = 2 + (F_CTX + F_ACT) * h1
    if h2 > 0:
        b2 = at + h1 * h2
        add_rows(g, params, b2, params, at, h2, h, pos, _positive(h, h1, pos), h2)
        wo = b2 + h2
        return params[wo + h2] + _dot_relu(params, wo, g, h2)
    return params[at + h1] + _dot_relu(params, at, h, h1)


#: a decision's scratch of at most this many bytes is taken on the stack (larger nets allocate it)
STACK_BYTES = 1 << 15


@nb.njit(cache=True, inline="always")
def _sizes(params):
    """(float32 values, int64 values) of a decision's scratch (see :func:`_views`)."""
    h1 = np.int64(params[0])
    return F_CTX + F_ACT + 2 * h1 + max(h1, np.int64(params[1])), max(h1, F_ACT)


@nb.njit(cache=True, inline="always")
def _views(params, f, pos):
    """A decision's float32 vectors ``ctx``, ``x``, ``hc``, ``h``, ``g`` (views of ``f``) and the
    int64 index list ``pos`` of :func:`_score`."""
    h1 = np.int64(params[0])
    x0 = F_CTX
    c0 = x0 + F_ACT
    h0 = c0 + h1
    g0 = h0 + h1
    return f[:x0], f[x0:c0], f[c0:h0], f[h0:g0], f[g0:], pos


@nb.njit(cache=True, inline="always")
def _scratch(params):
    """:func:`_views` of new arrays."""
    nf, npos = _sizes(params)
    return _views(params, np.empty(nf, np.float32), np.empty(npos, np.int64))


@nb.njit(cache=True)
def forward_rows(params, ctx, x, q):
    """q[i] of action rows ``x`` (float32[n, F_ACT]) in decisions ``ctx`` (float32[n, F_CTX], one
    row per action): the compiled forward pass on given inputs (tests hold it to torch's)."""
    _, _, hc, h, g, pos = _scratch(params)
    for i in range(x.shape[0]):
        _context(params, ctx[i], hc, pos)
        q[i] = _score(params, hc, x[i], h, g, pos)


@nb.njit(cache=True)
def scores(st, seat, params, ws, ctx, acts, xs, q):
    """Features and scores of every legal action of ``seat`` (the seat to act): the context into
    ``ctx``, the actions into ``acts``, their features into the rows of ``xs`` (float32[>= n,
    F_ACT]) and scores into ``q``; returns their number n."""
    _, _, hc, h, g, pos = _scratch(params)
    return _scores(st, seat, params, ws, ctx, acts, xs, q, hc, h, g, pos)


@kernel
def _scores(st, seat, params, ws, ctx, acts, xs, q, hc, h, g, pos):
    """:func:`scores` given its scratch vectors (a kernel: no reference counting)."""
    n = legal_actions(st, seat, acts)
    plays = n - 1 if n > 0 and acts[n - 1] == L.STOP else n
    begin_decision(st, seat, plays, ws, ctx)
    _context(params, ctx, hc, pos)
    for i in range(n):
        action_features(acts[i], ws, xs[i])
        q[i] = _score(params, hc, xs[i], h, g, pos)
    return n


@nb.njit(cache=True)
def net_act(st, seat, params, ws):
    """The policy: the legal action of highest score, or stop when nothing can be placed or
    moved. ``ws``: an int64 workspace of at least ``WS_SIZE``.

    A card placed on one empty side makes the same position (up to the order of the piles,
    which no feature sees) as on another, and so does a king placed, or a side pile moved, on
    one empty corner or another: such an action has the features, hence the score, of the one
    before it in the order of :func:`legal_actions`, so it cannot be strictly better and is not
    evaluated."""
    nf, npos = _sizes(params)
    if 4 * nf + 8 * npos <= STACK_BYTES:  # the scratch on this call's stack: no allocation
        f = stack_f32(nf)
        pos = stack_i64(npos)
    else:
        f = np.empty(nf, np.float32)
        pos = np.empty(npos, np.int64)
    ctx, x, hc, h, g, pos = _views(params, f, pos)
    return _best(st, seat, params, ws, ctx, x, hc, h, g, pos)


@kernel
def _best(st, seat, params, ws, ctx, x, hc, h, g, pos):
    """:func:`net_act` given its scratch vectors (compiled without numba's reference counting,
    :mod:`kc_sim.core.kernel`: it creates no array)."""
    hand = st[L.HAND + 2 * seat]
    mm = move_mask(st)
    plays = popcount(mm)
    for p in range(L.N_PILES):
        plays += popcount(place_mask(st, hand, p))
    if plays == 0:
        return L.STOP
    begin_decision(st, seat, plays, ws, ctx)
    _context(params, ctx, hc, pos)
    best = L.STOP
    top = -np.inf
    side_done = np.int64(0)               # cards already looked at on an empty side, corner
    corner_done = np.int64(0)
    for p in range(L.N_PILES):
        m = place_mask(st, hand, p)
        if st[L.PILE_TOP + p] < 0:
            if p < L.N_SIDES:
                m, side_done = m & ~side_done, side_done | m
            else:
                m, corner_done = m & ~corner_done, corner_done | m
        while m:
            a = lowest(m) * 8 + p
            m &= m - 1
            action_features(a, ws, x)
            q = _score(params, hc, x, h, g, pos)
            if q > top:
                top, best = q, a
    moved = 0                             # side piles already looked at on an empty corner
    while mm:
        a = L.MOVE_BASE + lowest(mm)
        mm &= mm - 1
        p = id_pile(a)
        if st[L.PILE_TOP + p] < 0:
            s = id_side(a)
            if (moved >> s) & 1:
                continue
            moved |= 1 << s
        action_features(a, ws, x)
        q = _score(params, hc, x, h, g, pos)
        if q > top:
            top, best = q, a
    if stop_legal(st):
        action_features(L.STOP, ws, x)
        q = _score(params, hc, x, h, g, pos)
        if q > top:
            best = L.STOP
    return best


# --- the slots: weights as data behind a fixed policy signature -----------------------------------

@intrinsic
def _slot_word(typingctx, i):
    """Word ``i`` of the slot table, read through the external symbol ``_SYMBOL``."""
    def codegen(context, builder, sig, args):
        mod = builder.module
        gv = mod.globals.get(_SYMBOL)
        if gv is None:
            gv = ir.GlobalVariable(mod, ir.ArrayType(ir.IntType(64), 2 * N_SLOTS), name=_SYMBOL)
            gv.linkage = "external"
        return builder.load(builder.gep(gv, [ir.Constant(ir.IntType(32), 0), args[0]]))
    return types.int64(types.int64), codegen


@intrinsic
def _f32_pointer(typingctx, address):
    def codegen(context, builder, sig, args):
        return builder.inttoptr(args[0], ir.PointerType(ir.FloatType()))
    return types.CPointer(types.float32)(types.int64), codegen


@nb.njit(cache=True)
def slot_params(k):
    """The parameter vector in slot ``k`` (a view of the array :func:`load_slot` keeps)."""
    return nb.carray(_f32_pointer(_slot_word(2 * k)), (_slot_word(2 * k + 1),))


_SLOT_ACT_SIG = types.int64(types.int64[::1], types.int64, types.int64[::1], types.int64)


def _slot_act(st, seat, mem, k):
    # mem[1:] is this seat's own scratch, zeroed every round: the features' workspace
    return net_act(st, seat, slot_params(k), mem[1:1 + WS_SIZE])


_compiled: dict = {}


def _slot_act_compiled():
    with _lock:
        if "act" not in _compiled:
            with compiling():
                f = nb.njit(cache=True)(_slot_act)
                f.compile(_SLOT_ACT_SIG)           # one signature: the slot number is never a literal
                f.disable_compile()
            _compiled["act"] = f
    return _compiled["act"]


def _make_slot_policy(two: int, more: int, act):
    def net_slot_policy(st, seat, mem):
        return act(st, seat, mem, two if st[L.PLAYERS] == 2 else more)
    net_slot_policy.__doc__ = (f"The network policy whose weights are in slot {two}" if two == more else
                               f"The network policy whose weights are in slot {two} at two seats, {more} at more")
    with compiling():
        return nb.njit(POLICY_SIG, cache=True)(net_slot_policy)


def slot_policy(k: int, more: int | None = None):
    """The compiled policy (``POLICY_SIG``) that plays the weights in slot ``k``, or with ``more``
    given, slot ``k`` at a two-seat table and slot ``more`` at a larger one (compiled, or loaded
    from numba's cache, on first use)."""
    more = k if more is None else more
    for s in (k, more):
        if not 0 <= s < N_SLOTS:
            raise ValueError(f"no slot {s}: slots are 0 to {N_SLOTS - 1}")
    act = _slot_act_compiled()
    with _lock:
        if (k, more) not in _compiled:
            _compiled[k, more] = _make_slot_policy(k, more, act)
        return _compiled[k, more]


def load_slot(params: np.ndarray, k: int | None = None) -> int:
    """Put the parameter vector ``params`` in slot ``k`` (default: the first free one) and
    return it; the slot's policy plays these weights from the next decision on."""
    params = np.ascontiguousarray(params, dtype=np.float32)
    if params.ndim != 1 or params.size < 2 or param_size(int(params[0]), int(params[1])) != params.size:
        raise UserError(f"bad network parameters: {params.size} values do not make a net of "
                        f"{F_CTX} + {F_ACT} inputs")
    with _lock:
        if k is None:
            free = [i for i in range(N_SLOTS) if i not in _held and i != TRAINING_SLOT]
            if not free:
                raise UserError(f"more than {N_SLOTS - 1} network models in one process")
            k = free[0]
        _held[k] = params                     # kept alive while the table points at it
        _TABLE[2 * k] = params.ctypes.data
        _TABLE[2 * k + 1] = params.size
    return k
