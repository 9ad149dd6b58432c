"""Operations of the network policy (:mod:`kc_sim.net.policy`) written in LLVM IR: sums
of scaled weight rows in vector registers (:func:`add_rows`), the output layer's running sums
in sixteen lanes (:func:`relu_dot_tree`) and scratch arrays on the stack
(:func:`stack_f32`, :func:`stack_i64`).

**Row sums.** The dense layers compute ``out[j] = start[j] + sum_i v_i * W[i, j]`` over the
listed inputs i.

Written as numba loops (``for i: for j: out[j] += v * W[i, j]``) this was left to LLVM's loop
vectorizer, which for a length known only at run time adds overlap checks and a vector body
wider (64 floats with AVX-512) than a hidden layer of 32 units, so it ran in the scalar
remainder loop, and every input re-read and re-wrote ``out``. Here ``out`` is taken 64, 32, 16
or 8 outputs at a time, kept in vector registers while the inputs' rows are added (LLVM IR
written directly: a vector multiply, then a vector add). Every output gets exactly the scalar
computation: each float32 product rounded, then added (never fused), the inputs in the same
order, so the results are the plain loop's, bit for bit.

**The output layer's sum** (:func:`relu_dot_tree`) has an order of its own, written out here
(sixteen lanes, then added by halves), so it too is the same on every machine; a plain
reference with that order is in the tests. With it and the wider row chunks the shipped
network played 1.12-1.17 times as many rounds a second against ``greedy`` as with four lanes
and 16-wide chunks (results/README.md, §9d).

**Stack scratch.** The policy needs a few float32 vectors per decision; ``np.empty`` costs an
allocation and a free each time (about a tenth of a decision). :func:`stack_f32` and
:func:`stack_i64` reserve them in the stack frame of the function that calls them (which must be
the function that uses them, and must not call them in a loop): an array without an owner,
valid until that function returns, uninitialised.
"""

from __future__ import annotations

import numba as nb
from llvmlite import ir
from numba import types
from numba.core.extending import intrinsic

import kc_sim.core  # noqa: F401 - sets numba's cache folder up before anything here compiles

__all__ = ["DOT_LANES", "add_rows", "relu_dot_tree", "stack_f32", "stack_i64"]


def _accumulate(builder, name: str, n, step: int, acc0, body):
    """Emit ``acc = acc0; for t in range(0, n, step): acc = body(t, acc)`` (``body`` emits its
    instructions in the loop's one block and returns the new ``acc``); leaves the builder after
    the loop and returns the final ``acc``."""
    i64 = ir.IntType(64)
    entry = builder.block
    head = builder.append_basic_block(f"{name}.head")
    loop = builder.append_basic_block(f"{name}.body")
    done = builder.append_basic_block(f"{name}.done")
    builder.branch(head)
    builder.position_at_end(head)
    t = builder.phi(i64)
    acc = builder.phi(acc0.type)
    builder.cbranch(builder.icmp_signed("<", t, n), loop, done)
    builder.position_at_end(loop)
    acc1 = body(t, acc)
    t1 = builder.add(t, ir.Constant(i64, step))
    end = builder.block
    builder.branch(head)
    t.add_incoming(ir.Constant(i64, 0), entry)
    t.add_incoming(t1, end)
    acc.add_incoming(acc0, entry)
    acc.add_incoming(acc1, end)
    builder.position_at_end(done)
    return acc


def _make_rows_chunk(width: int):
    @intrinsic
    def rows_chunk(typingctx, dst, jd, src, js, w, base, stride, vals, idx, n):
        """dst[jd:jd + width] = src[js:js + width] + the sum over t < n, in order, of
        vals[i] * w[base + i * stride:... + width] with i = idx[t]: the running sums held in a
        vector register, each product rounded then added (float32 arrays, int64 ``idx``)."""
        f32 = (dst, src, w, vals)
        if not all(isinstance(a, types.Array) and a.ndim == 1 and a.layout == "C" and a.dtype == types.float32
                   for a in f32):
            return None
        if not (isinstance(idx, types.Array) and idx.ndim == 1 and idx.layout == "C" and idx.dtype == types.int64):
            return None

        def codegen(context, builder, sig, args):
            d_arr, jd_, s_arr, js_, w_arr, base_, stride_, v_arr, i_arr, n_ = args
            data = [context.make_array(sig.args[k])(context, builder, args[k]).data for k in (0, 2, 4, 7, 8)]
            pd, ps, pw, pv, pi = data
            vt = ir.VectorType(ir.FloatType(), width)
            acc0 = builder.load(builder.bitcast(builder.gep(ps, [js_]), vt.as_pointer()), align=4)

            def add_row(t, acc):
                i = builder.load(builder.gep(pi, [t]))
                v = builder.load(builder.gep(pv, [i]))
                row = builder.add(base_, builder.mul(i, stride_))
                wv = builder.load(builder.bitcast(builder.gep(pw, [row]), vt.as_pointer()), align=4)
                splat = builder.insert_element(ir.Constant(vt, ir.Undefined), v, ir.Constant(ir.IntType(32), 0))
                splat = builder.shuffle_vector(splat, ir.Constant(vt, ir.Undefined),
                                               ir.Constant(ir.VectorType(ir.IntType(32), width), [0] * width))
                return builder.fadd(acc, builder.fmul(splat, wv))

            acc = _accumulate(builder, "rows", n_, 1, acc0, add_row)
            builder.store(acc, builder.bitcast(builder.gep(pd, [jd_]), vt.as_pointer()), align=4)
            return context.get_dummy_value()
        i64t = types.int64
        return types.void(dst, i64t, src, i64t, w, i64t, i64t, vals, idx, i64t), codegen
    return rows_chunk


def _make_chunks(width: int):
    rows = _make_rows_chunk(width)

    @nb.njit(inline="always")
    def chunks(dst, j, src, js, w, base, stride, vals, idx, n, m):
        """The outputs from ``j`` on in chunks of ``width`` while a whole chunk fits below
        ``m`` (:func:`add_rows`); returns the first output left."""
        while j + width <= m:
            rows(dst, j, src, js + j, w, base + j, stride, vals, idx, n)
            j += width
        return j
    return chunks


_chunks64, _chunks32, _chunks16, _chunks8 = (_make_chunks(width) for width in (64, 32, 16, 8))


@nb.njit(cache=True, inline="always")
def add_rows(dst, src, js, w, base, stride, vals, idx, n, m):
    """dst[j] = src[js + j] + sum over t < n (in that order) of vals[i] * w[base + i * stride + j]
    with i = idx[t], for j < m: a sum of weight rows, each scaled by its input, 64, 32, 16 or 8
    outputs at a time in vector registers (the weight rows read once, the outputs written
    once; the wider the chunk, the fewer times each input is fetched and broadcast); per
    output the same products added in the same order as a plain loop. Float32 arrays, ``idx``
    int64; ``dst`` may be ``src`` (with ``js`` 0)."""
    j = _chunks64(dst, 0, src, js, w, base, stride, vals, idx, n, m)
    j = _chunks32(dst, j, src, js, w, base, stride, vals, idx, n, m)
    j = _chunks16(dst, j, src, js, w, base, stride, vals, idx, n, m)
    j = _chunks8(dst, j, src, js, w, base, stride, vals, idx, n, m)
    while j < m:
        a = src[js + j]
        for t in range(n):
            i = idx[t]
            a += vals[i] * w[base + i * stride + j]
        dst[j] = a
        j += 1


#: the output layer's running sums (:func:`relu_dot_tree`): sixteen independent chains of adds
DOT_LANES = 16


@intrinsic
def relu_dot_tree(typingctx, v, w, at, n):
    """``sum over j < n of relu(v[j]) * w[at + j]`` (``n`` a multiple of ``DOT_LANES``; float32
    arrays) in a fixed order: lane ``l`` sums the terms of j = l, l + 16, ... in order (each
    product rounded, then added), then the sixteen lanes are added by halves (lane l + 8 to
    lane l, then l + 4 to l, l + 2, l + 1). Sixteen short chains of dependent adds instead of
    one long one (a chain waits on each add); the order is written here, not left to the
    compiler, so it is the same on every machine. relu is numba's ``max(v, 0.0)`` (``0.0 if
    0.0 > v else v``: -0.0 and nan stay)."""
    if not all(isinstance(a, types.Array) and a.ndim == 1 and a.layout == "C" and a.dtype == types.float32
               for a in (v, w)):
        return None

    def codegen(context, builder, sig, args):
        pv = context.make_array(sig.args[0])(context, builder, args[0]).data
        pw = context.make_array(sig.args[1])(context, builder, args[1]).data
        at_, n_ = args[2], args[3]
        vt = ir.VectorType(ir.FloatType(), DOT_LANES)
        zero = ir.Constant(vt, [0.0] * DOT_LANES)

        def add_lanes(j, acc):
            x = builder.load(builder.bitcast(builder.gep(pv, [j]), vt.as_pointer()), align=4)
            relu = builder.select(builder.fcmp_ordered(">", zero, x), zero, x)
            wv = builder.load(builder.bitcast(builder.gep(pw, [builder.add(at_, j)]), vt.as_pointer()), align=4)
            return builder.fadd(acc, builder.fmul(relu, wv))

        acc = _accumulate(builder, "dot", n_, DOT_LANES, zero, add_lanes)
        k = DOT_LANES
        while k > 1:                          # the lanes added by halves
            k //= 2
            half = ir.VectorType(ir.IntType(32), k)
            acc = builder.fadd(builder.shuffle_vector(acc, acc, ir.Constant(half, list(range(k)))),
                               builder.shuffle_vector(acc, acc, ir.Constant(half, list(range(k, 2 * k)))))
        return builder.extract_element(acc, ir.Constant(ir.IntType(32), 0))
    return types.float32(v, w, types.int64, types.int64), codegen


def _make_stack_array(dtype, llvm_type):
    @intrinsic
    def stack_array(typingctx, n):
        """An uninitialised contiguous array of ``n`` values in the caller's stack frame."""
        if not isinstance(n, types.Integer):
            return None
        array_type = types.Array(dtype, 1, "C")

        def codegen(context, builder, sig, args):
            count = context.cast(builder, args[0], sig.args[0], types.intp)
            data = builder.alloca(llvm_type, size=count)
            ary = context.make_array(array_type)(context, builder)
            itemsize = context.get_constant(types.intp, context.get_abi_sizeof(llvm_type))
            context.populate_array(ary, data=data, shape=[count], strides=[itemsize], itemsize=itemsize,
                                   meminfo=None)
            return ary._getvalue()
        return array_type(n), codegen
    return stack_array


#: ``stack_f32(n)``: a float32 array of n values on the caller's stack (see the module doc)
stack_f32 = _make_stack_array(types.float32, ir.FloatType())
#: ``stack_i64(n)``: an int64 array of n values on the caller's stack (see the module doc)
stack_i64 = _make_stack_array(types.int64, ir.IntType(64))
