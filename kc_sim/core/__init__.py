"""The compiled game core: flat int64 round states and numba kernels over them.

Importing this package sets up numba's compile-cache folder (:mod:`kc_sim.core.cache`)
before any of its modules, or any other module of kc-sim that compiles with numba (each
imports ``kc_sim.core`` first), defines a compiled function."""

import warnings

from kc_sim.core.cache import configure

# The core passes compiled policies as first-class functions, which numba flags as experimental
# (matched by its message: naming its class would import numba, which the command line and the
# other light modules start without).
warnings.filterwarnings("ignore", message="First-class function type feature is experimental")
configure()
