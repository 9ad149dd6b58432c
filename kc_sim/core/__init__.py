"""The compiled game core: flat int64 round states and numba kernels over them."""
