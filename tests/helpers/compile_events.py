"""Source text for a child process that records which functions numba compiles: it defines
``compiled`` (a list of qualified names) and a listener that appends to it; the script
registers the listener (``event.register("numba:compile", Listener())``) where counting starts."""

LISTENER = r"""
import json
from numba.core import event
compiled = []
class Listener(event.Listener):
    def on_start(self, ev):
        compiled.append(ev.data["dispatcher"].py_func.__qualname__)
    def on_end(self, ev):
        pass
"""
