"""Bit helpers for 52-bit card masks held in int64 (compiled).

``popcount`` and ``lowest`` are LLVM's ``ctpop`` and ``cttz`` intrinsics, which become
single instructions on current processors.
"""

import numba as nb
from llvmlite import ir
from numba import types
from numba.core.extending import intrinsic


@intrinsic
def _ctpop(typingctx, x):
    if not isinstance(x, types.Integer):
        return None

    def codegen(context, builder, sig, args):
        return builder.ctpop(args[0])

    return x(x), codegen


@intrinsic
def _cttz(typingctx, x):
    if not isinstance(x, types.Integer):
        return None

    def codegen(context, builder, sig, args):
        return builder.cttz(args[0], ir.Constant(ir.IntType(1), 0))

    return x(x), codegen


@nb.njit(cache=True, inline="always")
def popcount(m):
    """Number of set bits of a mask."""
    return _ctpop(m)


@nb.njit(cache=True, inline="always")
def lowest(m):
    """Index of the lowest set bit of a non-zero mask."""
    return _cttz(m)


@nb.njit(cache=True, inline="always")
def nth_bit(m, n):
    """Index of the n-th lowest set bit (0-based) of a mask with more than n bits set."""
    for _ in range(n):
        m &= m - 1
    return _cttz(m)
