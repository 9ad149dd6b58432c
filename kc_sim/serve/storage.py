"""Finished rounds kept as data: every round played at the table is appended to
``DATA/games.jsonl`` as one ``kc-sim/game/1`` line (docs/formats.md), whole or not at all.

How a line stays whole:

* it is written with **one** ``write`` on a descriptor opened ``O_APPEND``, under an
  exclusive ``flock`` (two servers on one folder append one after the other), then
  ``fsync``-ed before the round is reported saved. A process killed with -9 is killed
  between system calls, never inside that write;
* a short write (a full disk) is cut off again (``ftruncate`` to the size before it), and
  the round is reported not saved;
* before appending, a file whose last byte is not a newline (a line torn by a power cut or
  an outside writer) has that tail moved to ``games.jsonl.torn`` and cut off, so every line
  of ``games.jsonl`` is a whole record and ``kc-sim check`` reads the file as it is.
"""

from __future__ import annotations

import fcntl
import json
import os
import threading
from pathlib import Path

from kc_sim.errors import UserError, os_error_text

__all__ = ["RecordStore", "RECORDS_FILE"]

RECORDS_FILE = "games.jsonl"


class RecordStore:
    """The data folder's record file; :meth:`append` adds one round."""

    def __init__(self, folder):
        self.folder = Path(folder)
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise UserError(f"--data {self.folder}: cannot create the folder: {os_error_text(e)}") from None
        if not self.folder.is_dir():
            raise UserError(f"--data {self.folder}: not a folder")
        self.path = self.folder / RECORDS_FILE
        self._lock = threading.Lock()
        self.torn = 0
        try:
            with self._locked() as fd:      # a torn tail left by an earlier run is set aside now
                self._repair(fd)
        except OSError as e:
            raise UserError(f"--data {self.folder}: cannot write {self.path.name}: {os_error_text(e)}") from None

    def _locked(self):
        store = self

        class _Open:
            def __enter__(self):
                store._lock.acquire()
                try:
                    self.fd = os.open(store.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
                    fcntl.flock(self.fd, fcntl.LOCK_EX)
                except BaseException:
                    store._lock.release()
                    raise
                return self.fd

            def __exit__(self, *exc):
                try:
                    os.close(self.fd)        # closing drops the flock
                finally:
                    store._lock.release()

        return _Open()

    def _repair(self, fd: int) -> None:
        """Cut a tail that is not a whole line off the file, keeping it in ``.torn``."""
        size = os.fstat(fd).st_size
        if size == 0:
            return
        with open(self.path, "rb") as f:
            f.seek(size - 1)
            if f.read(1) == b"\n":
                return
            f.seek(0)
            data = f.read(size)
        keep = data.rfind(b"\n") + 1
        with open(self.path.with_name(self.path.name + ".torn"), "ab") as t:
            t.write(data[keep:] + b"\n")
        os.ftruncate(fd, keep)
        self.torn += 1

    def append(self, record: dict) -> Path:
        """Append one record as one line, whole, synced to disk; an OSError (disk full,
        folder gone) leaves the file as it was and is raised as a UserError."""
        line = (json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
        try:
            with self._locked() as fd:
                self._repair(fd)
                before = os.fstat(fd).st_size
                try:
                    n = os.write(fd, line)
                    if n != len(line):
                        raise OSError(28, f"short write ({n} of {len(line)} bytes)")
                    os.fsync(fd)
                except OSError:
                    os.ftruncate(fd, before)
                    raise
        except OSError as e:
            raise UserError(f"the round was not saved to {self.path}: {os_error_text(e)}") from None
        return self.path

    def count(self) -> int:
        """Records (lines) in the file."""
        try:
            with open(self.path, "rb") as f:
                return sum(1 for _ in f)
        except FileNotFoundError:
            return 0
