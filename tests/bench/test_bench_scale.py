"""`kc-sim bench --scale` measures real processes: the peak memory of a command (and of
its worker processes), and rejects bad sizes with one line."""

from __future__ import annotations

import sys

from kc_sim.bench.scale import measure
from kc_sim.cli import main

HOLD = "import time; x = bytearray({n}); x[::4096] = b'1' * len(x[::4096]); time.sleep(0.5)"


def test_peak_memory_of_a_process_and_of_its_children(tmp_path):
    alone = measure([sys.executable, "-c", HOLD.format(n=300_000_000)], tmp_path)
    assert alone["peak_mb"] > 280
    # a parent that holds little, with two children that hold 150 MB each at the same time
    parent = ("import subprocess, sys; c = [subprocess.Popen([sys.executable, '-c', " + repr(HOLD.format(n=150_000_000))
              + "]) for _ in range(2)]; [p.wait() for p in c]")
    own = measure([sys.executable, "-c", parent], tmp_path)
    tree = measure([sys.executable, "-c", parent], tmp_path, tree=True)
    assert own["peak_mb"] < 200 < 280 < tree["peak_mb"]


def test_bad_scale_sizes(capsys):
    assert main(["bench", "--scale", "--scale-rounds", "100k"]) == 2
    assert "bad --scale-rounds '100k'" in capsys.readouterr().err
    assert main(["bench", "--scale", "--scale-rounds", "1000"]) == 2
