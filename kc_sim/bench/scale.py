"""``kc-sim bench --scale``: does anything grow with the number of rounds?

Plays a 4-agent, 4-seat tournament at each size (default 1.5M and 9M rounds), then runs
``kc-sim leaderboard``, ``kc-sim plot`` and ``kc-sim report`` on it, each as its own
process, exactly as a person types them. For every command it records the wall time and
the peak memory, sampled every 20 ms: for the tournament the sum of the resident sets of
the parent and its worker processes, for the others the resident set of the process. The ratios compare sizes within the one run:
memory must stay flat (the targets are at most 1.3x from the smallest to the largest
size), and the leaderboard must take a small share of the tournament's own time.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

AGENTS = "greedy,merger,king-first,random"
POST = ("leaderboard", "plot", "report")


def _kc_sim() -> list[str]:
    exe = Path(sys.executable).parent / "kc-sim"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "kc_sim.cli"]


def _rss(pid: int, tree: bool) -> int:
    """Resident bytes of a process, with ``tree`` summed over its descendants too (0 once
    it is gone)."""
    try:
        p = psutil.Process(pid)
        procs = [p, *p.children(recursive=True)] if tree else [p]
    except psutil.Error:
        return 0
    total = 0
    for q in procs:
        try:
            total += q.memory_info().rss
        except psutil.Error:
            pass
    return total


def measure(args: list[str], cwd: Path, tree: bool = False, every: float = 0.02) -> dict:
    """Run a command; its wall seconds, peak memory in MB and output. The memory is
    sampled (every 20 ms) from the process, or with ``tree`` the sum over the process and
    its descendants. (``wait4``'s maximum resident set is no use here: Linux carries the
    high-water mark of the forking parent across ``exec``.)"""
    t0 = time.perf_counter()
    proc = subprocess.Popen(args, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    peak = [0]
    stop = threading.Event()

    def sample():
        while not stop.wait(every):
            peak[0] = max(peak[0], _rss(proc.pid, tree))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out = proc.stdout.read()
    proc.wait()
    stop.set()
    sampler.join()
    seconds = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed ({proc.returncode}): {out[-500:]}")
    return {"seconds": seconds, "peak_mb": peak[0] / 2 ** 20, "output": out}


def _tag(n: int) -> str:
    return f"{n / 1e6:g}m".replace(".", "p")


def run_scale(sizes=(1_500_000, 9_000_000), jobs: int | None = None, log=None) -> dict:
    """The figures as a flat dict: per size and command ``scale_<size>_<command>_s`` and
    ``..._peak_mb``, then the ratios of every larger size to the smallest."""
    kc = _kc_sim()
    figures: dict = {"scale_agents": AGENTS}
    with tempfile.TemporaryDirectory(prefix="kc-scale-") as tmp:
        for n in sizes:
            run = Path(tmp) / f"run{n}"
            args = kc + ["tournament", "--agents", AGENTS, "--players", "4", "--rounds", str(n), "-q",
                         "--out", str(run)] + (["--jobs", str(jobs)] if jobs else [])
            m = measure(args, Path(tmp), tree=True)
            own = re.search(r"rounds in ([0-9.]+) s", m["output"])
            tag = _tag(n)
            figures[f"scale_{tag}_tournament_s"] = round(float(own.group(1)) if own else m["seconds"], 2)
            figures[f"scale_{tag}_tournament_command_s"] = round(m["seconds"], 2)
            figures[f"scale_{tag}_tournament_peak_mb"] = round(m["peak_mb"], 1)
            for cmd in POST:
                folder = Path(tmp) / f"{cmd}{n}"
                folder.mkdir()
                out = ["-o", str(folder / "report.html" if cmd == "report" else folder)]
                m = measure(kc + [cmd, str(run)] + out, Path(tmp))
                figures[f"scale_{tag}_{cmd}_s"] = round(m["seconds"], 2)
                figures[f"scale_{tag}_{cmd}_peak_mb"] = round(m["peak_mb"], 1)
            if log:
                log(", ".join(f"{k}={v}" for k, v in figures.items() if f"_{tag}_" in k))
    small = _tag(min(sizes))
    for big in (_tag(n) for n in sorted(sizes)[1:]):
        for cmd in ("tournament", *POST):
            figures[f"scale_{cmd}_peak_{big}_vs_{small}"] = round(
                figures[f"scale_{big}_{cmd}_peak_mb"] / figures[f"scale_{small}_{cmd}_peak_mb"], 3)
        figures[f"scale_leaderboard_vs_tournament_time_{big}"] = round(
            figures[f"scale_{big}_leaderboard_s"] / figures[f"scale_{big}_tournament_s"], 3)
    return figures
