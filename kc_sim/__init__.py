"""kc-sim: a fast simulation harness for the card game Kings in the Corner."""

import warnings

from numba.core.errors import NumbaExperimentalFeatureWarning

from kc_sim import _cache

# The core passes compiled policies as first-class functions, which numba flags as experimental.
warnings.filterwarnings("ignore", category=NumbaExperimentalFeatureWarning)
CACHE_DIR = _cache.configure()

__version__ = "0.1.0"
