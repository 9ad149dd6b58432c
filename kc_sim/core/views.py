"""Borrowed array views without reference counting: a row of a 2-D array, and an array
at a raw address.

Slicing ``mem[seat]`` in compiled code makes a new array that is reference-counted
(two atomic operations); handed to a first-class function the count cannot be optimised
away, and at one call per decision that cost 10 ns, a quarter of a round's time. The
round loop instead hands each policy a view with no owner: valid while the loop's own
array lives, which is always longer than a policy call.

Passing an array from Python into a compiled function costs about 100 ns (its type is
checked and its header unboxed), an integer about 10 ns. The Python round loop, which
crosses into compiled code once per decision, therefore passes the address of buffers it
owns (``arr.ctypes.data``) and the compiled side rebuilds them with :func:`array_at`.
"""

from numba import types
from numba.core import cgutils
from numba.core.extending import intrinsic

_ROW = types.Array(types.int64, 1, "C")


@intrinsic
def row_view(typingctx, arr, i):
    """``arr[i]`` of a C-contiguous 2-D int64 array, as an unowned 1-D view."""
    if not (isinstance(arr, types.Array) and arr.ndim == 2 and arr.dtype == types.int64 and arr.layout == "C"):
        return None
    sig = _ROW(arr, i)

    def codegen(context, builder, sig, args):
        src = context.make_array(sig.args[0])(context, builder, args[0])
        out = context.make_array(_ROW)(context, builder)
        ncols = builder.extract_value(src.shape, 1)
        row = context.cast(builder, args[1], sig.args[1], types.intp)
        itemsize = context.get_constant(types.intp, 8)
        context.populate_array(
            out,
            data=builder.gep(src.data, [builder.mul(row, ncols)]),
            shape=cgutils.pack_array(builder, [ncols]),
            strides=cgutils.pack_array(builder, [itemsize]),
            itemsize=itemsize,
            meminfo=None,
        )
        return out._getvalue()

    return sig, codegen


@intrinsic
def array_at(typingctx, addr, n):
    """The ``n`` int64 at address ``addr`` (an integer) as an unowned 1-D C array. The
    caller keeps the memory alive and ``n`` within it; nothing is checked."""
    if not (isinstance(addr, types.Integer) and isinstance(n, types.Integer)):
        return None
    sig = _ROW(addr, n)

    def codegen(context, builder, sig, args):
        out = context.make_array(_ROW)(context, builder)
        ptr_type = context.get_data_type(types.int64).as_pointer()
        address = context.cast(builder, args[0], sig.args[0], types.intp)
        size = context.cast(builder, args[1], sig.args[1], types.intp)
        itemsize = context.get_constant(types.intp, 8)
        context.populate_array(
            out,
            data=builder.inttoptr(address, ptr_type),
            shape=cgutils.pack_array(builder, [size]),
            strides=cgutils.pack_array(builder, [itemsize]),
            itemsize=itemsize,
            meminfo=None,
        )
        return out._getvalue()

    return sig, codegen
