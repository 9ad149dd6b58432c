"""kc-sim: a fast simulation harness for the card game Kings in the Corner."""

import warnings

from kc_sim import _cache

# The core passes compiled policies as first-class functions, which numba flags as experimental
# (matched by its message: naming its class would import numba, which the command line and the
# other light modules start without).
warnings.filterwarnings("ignore", message="First-class function type feature is experimental")
CACHE_DIR = _cache.configure()

__version__ = "0.1.0"
