"""A run whose writer thread is held back (:mod:`kc_sim.tournament.storing`), so the
results of the chunks it plays wait to be stored."""

from __future__ import annotations

import threading


class HeldWriter:
    """Patches the run module ``run_module``: the writer thread's first step (the import of
    pyarrow and pandas, ``import_part_libraries``) waits until :meth:`release`, which the
    chunk played ``after`` (counting from 1) calls; ``fail_at`` (counting from 1): that
    chunk raises KeyboardInterrupt instead of playing, as a Ctrl-C during it would.
    :attr:`played` lists the chunks played in this process, :attr:`stored_before_release`
    what was stored when the writer was released (``stored``: a list an ``on_chunk`` fills)."""

    def __init__(self, monkeypatch, run_module, *, after: int | None = None, fail_at: int | None = None,
                 stored: list | None = None):
        self.gate = threading.Event()
        self.played: list[int] = []
        self.stored = stored if stored is not None else []
        self.stored_before_release: list[int] | None = None
        load, play = run_module.import_part_libraries, run_module.play_chunk

        def held_import():
            self.gate.wait(120)                 # (a safety net: a test that never releases fails, not hangs)
            load()

        def counted_play(task):
            if fail_at is not None and len(self.played) + 1 == fail_at:
                self.release()
                raise KeyboardInterrupt
            res = play(task)
            self.played.append(task.index)
            if after is not None and len(self.played) == after:
                self.release()
            return res

        monkeypatch.setattr(run_module, "import_part_libraries", held_import)
        monkeypatch.setattr(run_module, "play_chunk", counted_play)

    def release(self) -> None:
        if not self.gate.is_set():
            self.stored_before_release = list(self.stored)
            self.gate.set()
