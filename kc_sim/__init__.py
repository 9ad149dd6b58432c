"""kc-sim: a fast simulation harness for the card game Kings in the Corner.

Importing the package loads nothing else: the compile cache (``kc_sim.CACHE_DIR``, the
folder numba keeps kc-sim's compiled code in) is set up when the compiled core is first
imported (:mod:`kc_sim.core.cache`)."""

__version__ = "0.1.0"


def __getattr__(name):
    if name == "CACHE_DIR":
        from kc_sim.core.cache import configure  # lazy: import kc_sim hashes no sources

        return configure()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
