"""Bit helpers for 52-bit card masks held in int64 (compiled)."""

import numba as nb
import numpy as np


@nb.njit(cache=True, inline="always")
def popcount(m):
    """Number of set bits of a non-negative int64 mask (SWAR count)."""
    m = m - ((m >> 1) & 0x5555555555555555)
    m = (m & 0x3333333333333333) + ((m >> 2) & 0x3333333333333333)
    m = (m + (m >> 4)) & 0x0F0F0F0F0F0F0F0F
    return (m * 0x0101010101010101 & 0x7FFFFFFFFFFFFFFF) >> 56


@nb.njit(cache=True, inline="always")
def lowest(m):
    """Index of the lowest set bit of a non-zero mask."""
    return popcount((m & -m) - 1)


@nb.njit(cache=True, inline="always")
def highest(m):
    """Index of the highest set bit of a non-zero mask."""
    i = 0
    while m >> (i + 1):
        i += 1
    return i
