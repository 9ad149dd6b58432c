"""The command's supervisor: a run ends in one line and exit 2 even when its own process
cannot say so.

A process stuck in compiled code (a compiled policy that never returns) runs no Python,
not even a watchdog thread, and one that an agent ends with ``os._exit`` or crashes says
nothing. So ``kc-sim tournament`` and ``kc-sim bench-agent`` fork at their start
(:func:`supervise`): the child runs the command; this process - the one the shell waits
for - waits for it and:

* reads the child's watch file (:mod:`kc_sim.processes.watchfile`; the child says where
  it is on a pipe, through its :class:`SupervisedChannel`) and, when it counts as stuck
  (:func:`~kc_sim.processes.watchfile.stuck_reason`), kills it, has the command explain
  the stop (``explain``: the tournament replays the chunk to find the stalled round and
  save its record, :func:`kc_sim.tournament.rederive.stalled`), prints that in one line
  and exits 2;
* when the child ends without having said goodbye (an ``atexit`` line on the pipe: it
  was killed, or ``os._exit`` was called in it), says in one line what it was doing and
  exits 2; otherwise exits with the child's own code;
* on SIGTERM or SIGHUP passes SIGTERM on to the child, which stops as on Ctrl-C (its
  workers stopped, what is kept said), or is killed if it has not ended within a few
  seconds (stuck in compiled code); Ctrl-C is left to the child, which gets it too.

The child dies with this process (:mod:`~kc_sim.processes.lifeline`), and the workers
with the child, so ``kill -9`` of the command leaves no process behind. The supervisor
only runs where the command is the process's own (the ``kc-sim`` script or
``python -m kc_sim.cli``) and no thread has started yet; ``KC_SIM_SUPERVISE=0`` turns it off.
"""

from __future__ import annotations

import atexit
import functools
import os
import select
import signal
import sys
import threading
import time
from pathlib import Path

from kc_sim.processes.lifeline import die_with_parent
from kc_sim.support.notice import notice
from kc_sim.processes.watchfile import read_watch, stuck_reason

__all__ = ["SupervisedChannel", "supervise", "supervision"]

_POLL = 0.2                # seconds between looks at the child
_EXITING_POLL = 0.005      # the same once its end of the pipe has closed
_TERM_GRACE = 5.0          # after SIGTERM, this long before SIGKILL


def _is_the_command() -> bool:
    """Is this process the ``kc-sim`` command itself (not a test or a notebook calling it)?"""
    main = sys.argv[0] if sys.argv else ""
    return Path(main).name == "kc-sim" or main.replace("\\", "/").endswith("kc_sim/cli/__main__.py")


class SupervisedChannel:
    """The supervised child's end of the pipe to its supervisor (one per process, made by
    :func:`supervision`; open only in a supervised child): it says where the process's
    watch file is, and goodbye at exit."""

    def __init__(self):
        self.fd: int | None = None
        self._told: Path | None = None

    @property
    def active(self) -> bool:
        """Is this process supervised (a supervisor stops it if it gets stuck)?"""
        return self.fd is not None

    def open(self, fd: int) -> None:
        self.fd = fd
        atexit.register(self.goodbye)

    def tell_watch(self, path: Path) -> None:
        """Tell the supervisor where this process's watch file is (once for each file)."""
        if self.fd is None or self._told == path:
            return
        self._told = path
        try:
            os.write(self.fd, f"watch {path}\n".encode())
        except OSError:
            pass

    def goodbye(self) -> None:
        try:
            os.write(self.fd, b"exit\n")
        except (OSError, TypeError):
            pass


@functools.cache
def supervision() -> SupervisedChannel:
    """This process's channel to its supervisor (inactive unless :func:`supervise` made
    this process the supervised child)."""
    return SupervisedChannel()


def supervise(explain) -> None:
    """Fork: return in the child, which runs the command; in this process wait for it and
    exit (never returns). Does nothing where it cannot or should not (see the module doc).
    ``explain(entry, why)``: the error to report when the child is found stuck (``entry``
    its watch file, ``why`` the reason); called in this process after the child is killed."""
    if (os.environ.get("KC_SIM_SUPERVISE", "1") == "0" or not hasattr(os, "fork") or not _is_the_command()
            or threading.active_count() > 1):
        return
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    r, w = os.pipe()
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:                                   # the child: runs the command
        os.close(r)
        die_with_parent(parent)
        supervision().open(w)
        for sig in (signal.SIGTERM, signal.SIGHUP):   # passed on by the supervisor: stop as on Ctrl-C
            signal.signal(sig, _interrupt)
        return
    os.close(w)
    code = 2
    try:
        code = Supervisor(pid, r, explain).wait()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except OSError:
                pass
        os._exit(code)


def _interrupt(sig, frame) -> None:
    raise KeyboardInterrupt(f"stopped by {signal.Signals(sig).name}")


class Supervisor:
    """The command's process while its child runs the command: waits for the child, reads
    what it says on the pipe, and stops it when it is stuck (see the module doc)."""

    def __init__(self, pid: int, pipe: int, explain):
        self.pid, self.pipe, self.explain = pid, pipe, explain
        self.buf = b""
        self.closed = False                        # the pipe's end came: the child is exiting
        self.said_exit = False
        self.watch_file: Path | None = None
        self.ended_by: int | None = None           # the signal this process got and passed on
        os.set_blocking(pipe, False)
        signal.signal(signal.SIGINT, signal.SIG_IGN)       # Ctrl-C reaches the child too: it stops cleanly
        for sig in (signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, self._pass_on)

    def _pass_on(self, sig, frame) -> None:
        self.ended_by = sig
        try:
            os.kill(self.pid, signal.SIGTERM)
        except OSError:
            pass

    def _read(self) -> None:
        try:
            while chunk := os.read(self.pipe, 4096):
                self.buf += chunk
            self.closed = True
        except (BlockingIOError, InterruptedError):
            pass
        except OSError:
            return
        *lines, self.buf = self.buf.split(b"\n")
        for line in lines:
            text = line.decode("utf-8", "replace")
            if text == "exit":
                self.said_exit = True
            elif text.startswith("watch "):
                self.watch_file = Path(text[6:])

    def _pause(self) -> None:
        """Until the next look at the child: ``_POLL`` seconds, or as soon as the pipe has a
        line or ends (the child exiting closes it), so the command ends when its child does,
        not up to ``_POLL`` later."""
        if self.closed:
            time.sleep(_EXITING_POLL)
            return
        try:
            select.select([self.pipe], [], [], _POLL)
        except (OSError, ValueError):
            time.sleep(_POLL)

    def _entry(self) -> tuple[dict, float] | None:
        return read_watch(self.watch_file) if self.watch_file is not None else None

    def wait(self) -> int:
        """Wait for the child; its exit code, or 2 with one line when it could not say why it stopped."""
        term_at = None
        while True:
            try:
                done, status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:
                done, status = self.pid, 0
            if done:
                break
            self._read()
            if self.ended_by is not None:
                term_at = term_at or time.monotonic()
                if time.monotonic() - term_at > _TERM_GRACE:
                    os.kill(self.pid, signal.SIGKILL)
            else:
                got = self._entry()
                why = stuck_reason(*got) if got is not None else None
                if why is not None:
                    return self._stuck(got[0], why)
            self._pause()
        self._read()
        return self._ended(status)

    def _stuck(self, entry: dict, why: str) -> int:
        """The child is stuck: kill it (its workers die with it), find the round, say it."""
        try:
            os.kill(self.pid, signal.SIGKILL)
        except OSError:
            pass
        os.waitpid(self.pid, 0)
        try:
            notice(f"error: {self.explain(entry, why)}", over_progress=True)
        except Exception as e:  # noqa: BLE001 - whatever failed, the stop is said in one line
            notice(f"error: the run's process {self.pid} was stopped: {why}; its round could not be replayed "
                   f"({type(e).__name__}: {e}); finished chunks are kept: rerun the same command to resume",
                   over_progress=True)
        return 2

    def _ended(self, status: int) -> int:
        code = os.waitstatus_to_exitcode(status)
        if self.ended_by is not None:                  # (the child said what it kept, unless it was killed)
            if not self.said_exit:
                notice(f"stopped by {signal.Signals(self.ended_by).name}: finished chunks are kept: rerun the same "
                       "command to resume", over_progress=True)
            return 128 + self.ended_by
        if self.said_exit:
            return code
        got = self._entry()
        doing = ""
        if got is not None and got[0].get("state") in ("playing", "stuck"):
            e = got[0]
            what = "warming up" if int(e.get("chunk", 0)) < 0 else f"playing chunk {e.get('chunk')} with"
            doing = f" while {what} the agents {', '.join(map(str, e.get('agents', [])))}"
        how = f"was killed by {signal.Signals(-code).name}" if code < 0 else f"ended with exit code {code}"
        notice(f"error: the run's process {self.pid} {how}{doing}, without a word: an agent may have ended the "
               "interpreter (os._exit) or crashed it, or the process was killed; finished chunks are kept: rerun "
               "the same command to resume", over_progress=True)
        return 2
