"""A child process that shares a block of int64 words with this one, watched for progress.

Rule: to find where a process got stuck in code that cannot be interrupted (compiled or C
code), the work is done again in a child process (:func:`run_watched`) that keeps its
state in a file both processes map. This process looks at that block a few times a
second; once what ``progress(block)`` returns has not changed for the limit (plus
:data:`~kc_sim.processes.watchfile.GRACE`), it kills the child and keeps the block as the
child left it, for the caller to read where it was. Word :data:`READY` is set by the child
once it has started (it has :data:`START_LIMIT` seconds for that); the other words are the
caller's. A child that ends writes its result (bytes) to a file instead.

The child's side is :func:`child_end`, in a module run as ``python -m MODULE SHARED
RESULT``; it dies with this process (:mod:`~kc_sim.processes.lifeline`). The tournament
uses this to replay a stalled chunk decision by decision (:mod:`kc_sim.tournament.rederive`).
"""

from __future__ import annotations

import json
import mmap
import os
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from kc_sim.processes.lifeline import die_with_parent
from kc_sim.processes.watchfile import GRACE

__all__ = ["READY", "START_LIMIT", "ChildEnd", "Outcome", "child_end", "run_watched"]

#: the word of the shared block the child sets once it has started
READY = 0
#: seconds the child may take to start (import, load the agents and the compiled code)
START_LIMIT = 120.0
#: seconds between looks at the shared block
_LOOK = 0.05


@dataclass(frozen=True)
class Outcome:
    """How a watched child ended: stuck (and killed: ``block`` as it left it, ``waited``
    seconds without progress), or by itself (``result``: what it wrote, None if nothing)."""

    block: np.ndarray | None = None
    waited: float = 0.0
    result: bytes | None = None


def run_watched(module: str, payload, words: int, progress, limit: float) -> Outcome:
    """Run ``python -m module`` as a child given ``payload`` (JSON) and a shared block of
    ``words`` int64 words (zeros); kill it once ``progress(block)`` has not changed for
    ``limit + GRACE`` seconds after it set :data:`READY`. Raises OSError if it cannot start."""
    with tempfile.TemporaryDirectory(prefix="kc-sim-replay-") as tmp:
        shared, result = Path(tmp) / "shared", Path(tmp) / "result"
        shared.write_bytes(bytes(8 * words))
        proc = subprocess.Popen([sys.executable, "-m", module, str(shared), str(result)],
                                stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with proc:
            proc.stdin.write(json.dumps({"payload": payload, "parent": os.getpid()}).encode())
            proc.stdin.close()
            stuck = _watch_child(proc, shared, progress, limit)
            if stuck is not None:
                proc.kill()
                proc.wait()
                return Outcome(block=stuck[0], waited=stuck[1])
        try:
            return Outcome(result=result.read_bytes() if result.exists() else None)
        except OSError:
            return Outcome()


def _watch_child(proc, shared: Path, progress, limit: float):
    """Wait for the child; once it has made no progress past ``limit``, the shared block (a
    copy) and the seconds it was stuck (the child is then to be killed); None when the
    child ended."""
    t0 = time.monotonic()
    key, since = None, t0
    while proc.poll() is None:
        time.sleep(_LOOK)
        now = time.monotonic()
        view = np.fromfile(shared, dtype=np.int64)     # what the child wrote last (the file's pages)
        if not view[READY]:
            if now - t0 > START_LIMIT:
                return None
            continue
        k = progress(view)
        if k != key:
            key, since = k, now
        elif now - since > limit + GRACE:        # (the child may stop a Python-level stall itself within the limit)
            return view, now - since
    return None


@dataclass
class ChildEnd:
    """The child's side: the shared block (an int64 view of the mapped file), the payload,
    and where its result goes."""

    block: np.ndarray
    payload: object
    result: Path

    def write_result(self, data: bytes) -> None:
        self.result.write_bytes(data)


@contextmanager
def child_end():
    """In the child (``python -m MODULE SHARED RESULT``, the payload on stdin): a
    :class:`ChildEnd`; the child dies with the process that started it."""
    shared, result = sys.argv[1], sys.argv[2]
    args = json.loads(sys.stdin.read())
    die_with_parent(args["parent"])
    with open(shared, "r+b") as f, mmap.mmap(f.fileno(), 0) as mm:
        end = ChildEnd(np.frombuffer(mm, dtype=np.int64), args["payload"], Path(result))
        try:
            yield end
        finally:
            del end.block
