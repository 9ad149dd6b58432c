"""How the core's hot functions are compiled: :func:`kernel`, numba with the on-disk cache
and without reference counting.

numba counts the references to every array a compiled function handles: binding an array
to a new name (which every ``inline="always"`` helper taking the state does) and passing
it on add one and drop one, each an atomic read-modify-write of the array's header. In
the round loop that was two to three atomic pairs per decision, in code that is otherwise
a few hundred plain instructions; an atomic operation costs tens of cycles and more on
some processors than others. A function that creates no array needs none of it: every
array it sees belongs to a caller that outlives the call. So the rules, the step
functions, the round loop and the built-in policies are compiled with numba's runtime
switched off (numba's ``_nrt=False`` option): the same code without the counting.

The rule for a kernel: it creates no array (``np.zeros``, ``np.empty``, copies). numba
refuses to compile one that does ("NRT required but not enabled"), so the mistake shows
at once. Views (slices, ``kc_sim.core.views``) are fine. Functions that allocate (the
round and match loops around the kernel, the search agents' planners) stay plain
``nb.njit(cache=True)``; calling a kernel from them, or them from a kernel, is fine.
"""

import numba as nb

#: numba's options for a kernel (see the module docstring)
KERNEL_OPTIONS = {"cache": True, "_nrt": False}


def kernel(fn=None, **options):
    """``nb.njit(cache=True, _nrt=False, **options)``: compile ``fn`` as a kernel (see the module
    docstring). Used bare (``@kernel``) or with extra numba options (``@kernel(inline=...)``)."""
    if fn is None:
        return lambda f: nb.njit(**KERNEL_OPTIONS, **options)(f)
    return nb.njit(**KERNEL_OPTIONS, **options)(fn)


def prepare_numba() -> None:
    """Load numba's compiler registries now (about 0.25 s), which the first function loaded
    from the cache in a process would otherwise do: a worker process calls it as it starts,
    before it knows what it will play, so that loading the run's compiled code later is quick."""
    from numba.core.registry import cpu_target

    cpu_target.target_context.refresh()
