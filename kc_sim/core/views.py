"""A borrowed view of one row of a 2-D array, without reference counting.

Slicing ``mem[seat]`` in compiled code makes a new array that is reference-counted
(two atomic operations); handed to a first-class function the count cannot be optimised
away, and at one call per decision that cost 10 ns, a quarter of a round's time. The
round loop instead hands each policy a view with no owner: valid while the loop's own
array lives, which is always longer than a policy call.
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
