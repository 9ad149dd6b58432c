"""The supervised child's channel (one object, the watch file said once for each file) and
the generic watched child of a replay: killed once it makes no progress, its shared block
kept; its result read when it ends."""

from __future__ import annotations

import os
import sys
import textwrap
from pathlib import Path

from kc_sim.processes.rederive import run_watched
from kc_sim.processes.supervise import SupervisedChannel, supervision


def test_the_channel_tells_each_watch_file_once():
    assert supervision() is supervision() and not supervision().active
    r, w = os.pipe()
    channel = SupervisedChannel()
    channel.fd = w                                   # (open() would also say goodbye at exit)
    for path in (Path("/a.json"), Path("/a.json"), Path("/b.json")):
        channel.tell_watch(path)
    channel.goodbye()
    os.close(w)
    with os.fdopen(r) as f:
        assert f.read().splitlines() == ["watch /a.json", "watch /b.json", "exit"]


CHILD = """
import time
from kc_sim.processes.rederive import READY, child_end

with child_end() as end:
    end.block[READY] = 1
    for i in range(end.payload["steps"]):
        end.block[1] = i + 1
        time.sleep(0.01)
    if end.payload["stick"]:
        time.sleep(10 ** 6)
    end.write_result(b"done")
"""


def _child(tmp_path, monkeypatch):
    (tmp_path / "watched_child.py").write_text(textwrap.dedent(CHILD))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path), *sys.path]))


def test_a_child_that_makes_no_progress_is_killed_and_its_block_kept(tmp_path, monkeypatch):
    _child(tmp_path, monkeypatch)
    out = run_watched("watched_child", {"steps": 5, "stick": True}, 4, lambda block: int(block[1]), limit=0.5)
    assert out.result is None and out.block is not None and out.block[1] == 5 and out.waited > 0.5


def test_a_child_that_ends_gives_its_result(tmp_path, monkeypatch):
    _child(tmp_path, monkeypatch)
    out = run_watched("watched_child", {"steps": 3, "stick": False}, 4, lambda block: int(block[1]), limit=5)
    assert out.block is None and out.result == b"done"
