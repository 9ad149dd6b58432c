"""A line the user should see while a command goes on (not its error): ``kc-sim: ...`` on
stderr, flushed at once. The one home of that form: the run folder's lock and repairs, the
watchdog's slow agents and failed looks, and the supervisor's word on its child's end all
say it through :func:`notice`."""

from __future__ import annotations

import sys

__all__ = ["notice"]


def notice(message: str, *, over_progress: bool = False) -> None:
    """Print ``kc-sim: message`` on stderr. ``over_progress``: the line is written where a
    process that has gone left its progress bar (the supervisor, after its child's end): in
    a terminal the line is cleared first, so the message is a line of its own, and a
    terminal that has gone (SIGHUP) is no error."""
    if not over_progress:
        print(f"kc-sim: {message}", file=sys.stderr, flush=True)
        return
    try:
        clear = "\r\x1b[K" if sys.stderr.isatty() else ""
        print(f"{clear}kc-sim: {message}", file=sys.stderr, flush=True)
    except OSError:
        pass
