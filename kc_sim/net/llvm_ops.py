"""Operations of the network policy (:mod:`kc_sim.net.policy`) written in LLVM IR: sums
of scaled weight rows in vector registers (:func:`add_rows`), the output layer's four running
sums as one vector (:func:`relu_dot_lanes`) and scratch arrays on the stack
(:func:`stack_f32`, :func:`stack_i64`).

**Row sums.** The dense layers compute ``out[j] = start[j] + sum_i v_i * W[i, j]`` over the
listed inputs i.

Written as numba loops (``for i: for j: out[j] += v * W[i, j]``) this was left to LLVM's loop
vectorizer, which for a length known only at run time adds overlap checks and a vector body
wider (64 floats with AVX-512) than a hidden layer of 32 units, so it ran in the scalar
remainder loop, and every input re-read and re-wrote ``out``. Here ``out`` is taken 16 or 8
outputs at a time, kept in a vector register while the inputs' rows are added (LLVM IR written
directly: a vector multiply, then a vector add). Every output gets exactly the scalar
computation: each float32 product rounded, then added (never fused), the inputs in the same
order, so the results are the plain loop's, bit for bit.

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

__all__ = ["add_rows", "relu_dot_lanes", "stack_f32", "stack_i64"]


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


_rows16 = _make_rows_chunk(16)
_rows8 = _make_rows_chunk(8)


@nb.njit(cache=True, inline="always")
def add_rows(dst, src, js, w, base, stride, vals, idx, n, m):
    """dst[j] = src[js + j] + sum over t < n (in that order) of vals[i] * w[base + i * stride + j]
    with i = idx[t], for j < m: a sum of weight rows, each scaled by its input, sixteen or
    eight outputs at a time in a vector register (the weight rows read once, the outputs
    written once); per output the same products added in the same order as a plain loop.
    Float32 arrays, ``idx`` int64; ``dst`` may be ``src`` (with ``js`` 0)."""
    j = 0
    while j + 16 <= m:
        _rows16(dst, j, src, js + j, w, base + j, stride, vals, idx, n)
        j += 16
    if j + 8 <= m:
        _rows8(dst, j, src, js + j, w, base + j, stride, vals, idx, n)
        j += 8
    while j < m:
        a = src[js + j]
        for t in range(n):
            i = idx[t]
            a += vals[i] * w[base + i * stride + j]
        dst[j] = a
        j += 1


@intrinsic
def relu_dot_lanes(typingctx, v, w, at, n):
    """The four running sums ``q_l = sum over j < n, j % 4 == l, in order, of relu(v[j]) *
    w[at + j]`` (``n`` a multiple of 4; float32 arrays) as one 4-lane vector: relu is numba's
    ``max(v, 0.0)`` (``0.0 if 0.0 > v else v``: -0.0 and nan stay), each product rounded then
    added to its lane, as four scalar sums would."""
    if not all(isinstance(a, types.Array) and a.ndim == 1 and a.layout == "C" and a.dtype == types.float32
               for a in (v, w)):
        return None
    ret = types.UniTuple(types.float32, 4)

    def codegen(context, builder, sig, args):
        pv = context.make_array(sig.args[0])(context, builder, args[0]).data
        pw = context.make_array(sig.args[1])(context, builder, args[1]).data
        at_, n_ = args[2], args[3]
        vt = ir.VectorType(ir.FloatType(), 4)
        zero = ir.Constant(vt, [0.0] * 4)

        def add_lanes(j, acc):
            x = builder.load(builder.bitcast(builder.gep(pv, [j]), vt.as_pointer()), align=4)
            relu = builder.select(builder.fcmp_ordered(">", zero, x), zero, x)
            wv = builder.load(builder.bitcast(builder.gep(pw, [builder.add(at_, j)]), vt.as_pointer()), align=4)
            return builder.fadd(acc, builder.fmul(relu, wv))

        acc = _accumulate(builder, "dot", n_, 4, zero, add_lanes)
        out = context.get_value_type(ret)(ir.Undefined)
        for lane in range(4):
            out = builder.insert_value(out, builder.extract_element(acc, ir.Constant(ir.IntType(32), lane)), lane)
        return out
    return ret(v, w, types.int64, types.int64), codegen


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
