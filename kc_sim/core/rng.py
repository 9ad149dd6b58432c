"""The core's own random numbers: splitmix64 over uint64, so that results never depend
on numpy's generators, the number of workers or the backend.

Generator states live in int64 slots of arrays (a policy's memory, the round loop's
scratch); the functions reinterpret them as uint64.
"""

import numba as nb
import numpy as np

from kc_sim.core.kernel import kernel

GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31, _S32, _S1 = np.uint64(30), np.uint64(27), np.uint64(31), np.uint64(32), np.uint64(1)


@nb.njit(cache=True, inline="always")
def mix64(z):
    """splitmix64's finaliser: a bijective scramble of a uint64."""
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


@nb.njit(cache=True, inline="always")
def advance(s):
    """The generator's step on a uint64 state held in a local: (next state, its uint64)."""
    s = s + GOLDEN
    return s, mix64(s)


@nb.njit(cache=True, inline="always")
def next_u64(state, i):
    """Advance the generator held in ``state[i]`` and return its next uint64."""
    s, z = advance(np.uint64(state[i]))
    state[i] = np.int64(s)
    return z


@nb.njit(cache=True, inline="always")
def scale(z, k):
    """Map a uniform uint64 ``z`` to a uniform integer in [0, k) (k < 2**32)."""
    return np.int64(((z >> _S32) * np.uint64(k)) >> _S32)


@nb.njit(cache=True, inline="always")
def below(state, i, k):
    """A uniform integer in [0, k) from the generator in ``state[i]`` (k < 2**32)."""
    return scale(next_u64(state, i), k)


@kernel
def derive(seed, k):
    """A non-negative 63-bit seed for sub-stream ``k`` of ``seed`` (rounds of a run, seats of a round)."""
    z = mix64(np.uint64(seed) ^ mix64(np.uint64(k) + GOLDEN))
    return np.int64(z >> _S1)
