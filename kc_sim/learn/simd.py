"""``y += v * w`` on float32 vectors as explicit vector instructions, for the network policy's
dense layers (:mod:`kc_sim.learn.net_policy`).

numba leaves such a loop to LLVM's loop vectorizer, which for a length known only at run time
adds checks that the arrays do not overlap and a vector body wide enough (64 floats with
AVX-512) that a hidden layer of 32 units ran entirely in the scalar remainder loop. Here the
loop is written in chunks of 16 and 8 floats, each one LLVM vector multiply and one vector
add: every element gets exactly the scalar ``y[j] + v * w[j]`` (a float32 product rounded,
then added; the two are not fused), so the results are the loop's, bit for bit.
"""

from __future__ import annotations

import numba as nb
from llvmlite import ir
from numba import types
from numba.core.extending import intrinsic

__all__ = ["axpy"]


def _make_axpy_chunk(width: int):
    @intrinsic
    def axpy_chunk(typingctx, y, jy, w, jw, v):
        """y[jy:jy + width] += v * w[jw:jw + width] (float32 arrays, in bounds), as vector ops."""
        if not all(isinstance(a, types.Array) and a.ndim == 1 and a.layout == "C" and a.dtype == types.float32
                   for a in (y, w)):
            return None                   # contiguous float32 only: the code steps 4 bytes
        def codegen(context, builder, sig, args):
            ya = context.make_array(sig.args[0])(context, builder, args[0])
            wa = context.make_array(sig.args[2])(context, builder, args[2])
            vt = ir.VectorType(ir.FloatType(), width)
            py = builder.bitcast(builder.gep(ya.data, [args[1]]), vt.as_pointer())
            pw = builder.bitcast(builder.gep(wa.data, [args[3]]), vt.as_pointer())
            splat = builder.insert_element(ir.Constant(vt, ir.Undefined), args[4], ir.Constant(ir.IntType(32), 0))
            splat = builder.shuffle_vector(splat, ir.Constant(vt, ir.Undefined),
                                           ir.Constant(ir.VectorType(ir.IntType(32), width), [0] * width))
            total = builder.fadd(builder.load(py, align=4), builder.fmul(splat, builder.load(pw, align=4)))
            builder.store(total, py, align=4)
            return context.get_dummy_value()
        return types.void(y, types.int64, w, types.int64, types.float32), codegen
    return axpy_chunk


_axpy16 = _make_axpy_chunk(16)
_axpy8 = _make_axpy_chunk(8)


@nb.njit(cache=True, inline="always")
def axpy(y, w, at, v, n):
    """y[j] += v * w[at + j] for j < n: ``y`` and ``w`` contiguous float32 arrays (``v`` a
    float32), ``y`` at least n long and ``w`` at least ``at + n``."""
    j = 0
    while j + 16 <= n:
        _axpy16(y, j, w, at + j, v)
        j += 16
    if j + 8 <= n:
        _axpy8(y, j, w, at + j, v)
        j += 8
    while j < n:
        y[j] += v * w[at + j]
        j += 1
