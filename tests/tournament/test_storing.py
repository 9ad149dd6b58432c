"""The parent's writer thread (:class:`kc_sim.tournament.storing.ChunkWriter`): the rules of
its module docstring, one test each. (A run with a held writer, Ctrl-C and a write error
through a whole run: tests/tournament/test_tournament.py and test_until.py.)"""

from __future__ import annotations

import threading

import pytest

from kc_sim.tournament.storing import DEPTH, ChunkWriter


def _writers() -> int:
    return sum(t.name == "kc-sim-writer" for t in threading.enumerate())


def test_items_are_stored_in_the_order_they_were_put_after_prepare():
    seen = []
    with ChunkWriter(lambda item: seen.append(item), prepare=lambda: seen.append("prepared")) as w:
        for i in range(20):
            assert w.put(i)
        w.finish()
    assert seen == ["prepared", *range(20)]
    assert _writers() == 0


def test_at_most_depth_items_wait_then_the_player_waits():
    gate = threading.Event()
    with ChunkWriter(lambda item: None, prepare=gate.wait) as w:
        for i in range(DEPTH):
            w.put(i)                              # the queue takes DEPTH items while the writer is held
        extra = threading.Thread(target=w.put, args=(DEPTH,))
        extra.start()
        extra.join(0.3)
        assert extra.is_alive()                  # one more waits for room (it cannot have put it)
        gate.set()
        extra.join()
        w.finish()


def test_once_the_run_is_over_what_waits_is_dropped_and_put_says_so():
    seen, gate = [], threading.Event()
    with ChunkWriter(lambda item: seen.append(item) or item == 2, prepare=gate.wait) as w:
        for i in range(5):
            assert w.put(i)                       # held: all five wait
        gate.set()
        w.finish()
        assert not w.put(5) and w.over
    assert seen == [0, 1, 2]


@pytest.mark.parametrize("error", [OSError(28, "No space left on device", "/x/part-00001.parquet"),
                                   KeyboardInterrupt()])
def test_an_error_in_the_thread_drops_what_waits_and_is_raised_in_the_player(error):
    seen, gate = [], threading.Event()

    def store(item):
        if item == 1:
            raise error
        seen.append(item)

    with ChunkWriter(store, prepare=gate.wait) as w:
        for i in range(4):
            w.put(i)
        gate.set()
        with pytest.raises(type(error)) as e:
            w.finish()
        assert e.value is error
        with pytest.raises(type(error)):          # and at the next put, should the player go on
            w.put(9)
    assert seen == [0]
    assert _writers() == 0


def test_an_error_in_prepare_is_raised_at_the_first_put_and_nothing_is_stored():
    seen = []

    def prepare():
        raise ImportError("no pyarrow")

    with ChunkWriter(seen.append, prepare=prepare) as w:
        with pytest.raises(ImportError):
            w.finish()
    assert seen == []


def test_close_ends_the_thread_after_the_store_in_progress_dropping_what_waits():
    seen, storing, go = [], threading.Event(), threading.Event()

    def store(item):
        storing.set()
        go.wait()
        seen.append(item)

    w = ChunkWriter(store)
    for i in range(3):
        w.put(i)
    storing.wait()                                # item 0 is being stored
    closer = threading.Thread(target=w.close)     # (leaving the with block does this)
    closer.start()
    while not w._drop.is_set():
        threading.Event().wait(0.01)
    go.set()
    closer.join()
    assert seen == [0]
    assert _writers() == 0
    w.close()                                     # again: nothing to do
