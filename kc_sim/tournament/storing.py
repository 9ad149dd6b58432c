"""The parent's writer thread: chunks stored while the next chunk plays.

Why: in one process the compiled loop plays a chunk of 50,000 rounds in about 0.1 s, and
storing it (the chunk's tally, the arrow table, parquet with zstd and page checksums, its
sha256, the manifest) cost another 30% of that in the same thread (issue 34). The compiled
loops release the GIL while they play, so a thread of the parent stores chunk ``i`` (and
tallies it, when the parent played it: :func:`kc_sim.tournament.worker.play_chunk`) while
the loop plays chunk ``i + 1``, and the play phase costs about what the loop costs.

The rules of :class:`ChunkWriter` (each has a test in tests/tournament/test_storing.py):

* **order**: results are stored in the order they were put, one at a time, each whole
  (its parts, then the manifest: :meth:`kc_sim.runs.RunFolder.store`);
* **memory**: at most :data:`DEPTH` results wait; a full queue makes the player wait, so
  memory does not grow with the number of rounds;
* **first**: before its first store the thread runs ``prepare`` (the run's import of
  pyarrow and pandas, about 0.35 s of a core), while the first chunks play;
* **the run is over** when ``store`` returns True (the stopping rule of ``--until``): what
  waits is dropped, and :meth:`ChunkWriter.put` returns False;
* **an error in the thread** (a store that fails: an unwritable folder, a full disk; or the
  caller's callback raising): the thread stores nothing more, what waits is dropped (played
  again on resume), and the error is raised in the playing thread by its next
  :meth:`~ChunkWriter.put` or by :meth:`~ChunkWriter.finish`, as if raised there;
* **an error in the playing thread** (Ctrl-C, a faulty agent, a lost worker): the caller
  calls :meth:`~ChunkWriter.finish`, so every chunk that was played is stored before the
  error goes on;
* **no thread outlives the run**: :meth:`~ChunkWriter.close` (leaving the ``with`` block)
  ends the thread after the store in progress, dropping what waits, and joins it.
"""

from __future__ import annotations

import queue
import threading
from typing import Callable

__all__ = ["DEPTH", "ChunkWriter"]

#: results that may wait for the writer (a chunk's compact columns: a few MB each)
DEPTH = 8
_END = object()


class ChunkWriter:
    """A thread storing what :meth:`put` gives it with ``store(item)`` (True: the run is
    over), after ``prepare()`` (module doc). Use it as a context manager."""

    def __init__(self, store: Callable[[object], bool], prepare: Callable[[], None] | None = None,
                 depth: int = DEPTH):
        self._store = store
        self._prepare = prepare
        self._queue: queue.Queue = queue.Queue(maxsize=depth)
        self._drop = threading.Event()          # close(): store nothing more
        self._ended = False                     # the end was put in the queue
        self.error: BaseException | None = None
        self.over = False                       # store said the run is over
        self._thread = threading.Thread(target=self._run, name="kc-sim-writer", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            if self._prepare is not None:
                self._prepare()
        except BaseException as e:  # noqa: BLE001 - raised in the playing thread (module doc)
            self.error = e
        while True:
            item = self._queue.get()
            if item is _END:
                return
            if self.error is not None or self.over or self._drop.is_set():
                continue                        # dropped (module doc)
            try:
                self.over = bool(self._store(item))
            except BaseException as e:  # noqa: BLE001 - raised in the playing thread (module doc)
                self.error = e

    def _raise(self) -> None:
        if self.error is not None:
            raise self.error

    def put(self, item) -> bool:
        """Queue ``item`` for storing (waiting while :data:`DEPTH` items wait); False, and
        the item dropped, once the run is over. Raises the thread's error, if any."""
        self._raise()
        if self.over:
            return False
        self._queue.put(item)
        return True

    def finish(self) -> None:
        """Store everything put, end the thread and raise its error, if any."""
        self._end()
        self._raise()

    def close(self) -> None:
        """End the thread after the store in progress, dropping what waits (a no-op after
        :meth:`finish`)."""
        self._drop.set()
        self._end()

    def _end(self) -> None:
        if not self._ended:
            self._queue.put(_END)               # the thread takes one item at a time: room comes
            self._ended = True
        self._thread.join()

    def __enter__(self) -> ChunkWriter:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
