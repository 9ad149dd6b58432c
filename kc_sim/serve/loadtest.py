"""Scripted players through the API of a real ``kc-sim serve`` on 127.0.0.1: ``kc-sim
bench-serve`` and the load test.

:func:`start_server` runs ``kc-sim serve --port 0`` in a child process and reads the address
it prints; :func:`run_load` has many scripted players (one thread and one HTTP client each)
open a game against one agent and play its rounds to the end at once, each playing its first
legal action until only ``stop`` is left. Every action's latency is measured at the client,
and the agents' thinking the server reports for it (the ``Server-Timing: agents`` header) is
taken out, leaving what a person waits for the server itself. Every loop is bounded in
count and in time; the traffic goes to 127.0.0.1 only.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["start_server", "stop_server", "run_load", "LoadReport", "play_game", "agents_ms"]

#: the most actions one scripted player's turn makes before it stops
MAX_TURN_ACTIONS = 40
#: the most requests one scripted player makes in all
MAX_REQUESTS = 5_000
_ADDRESS = re.compile(r"play at (http://\S+/) ")


def start_server(data: Path, *, agents: str = "greedy", extra=(), timeout: float = 180.0, env=None):
    """Start ``kc-sim serve`` on 127.0.0.1, a free port, records in ``data``; returns
    (process, base url). Waits (up to ``timeout`` s) for the line with its address."""
    cmd = [sys.executable, "-m", "kc_sim.cli", "serve", "--host", "127.0.0.1", "--port", "0", "--data", str(data),
           "--agents", agents, *extra]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env or dict(os.environ), start_new_session=True)
    lines: list[str] = []
    found: list[str] = []

    def read():
        for line in proc.stdout:
            lines.append(line)
            m = _ADDRESS.search(line)
            if m and not found:
                found.append(m.group(1))

    threading.Thread(target=read, daemon=True).start()
    end = time.monotonic() + timeout
    while not found and proc.poll() is None and time.monotonic() < end:
        time.sleep(0.05)
    if not found:
        stop_server(proc)
        err = proc.stderr.read() if proc.stderr else ""
        raise RuntimeError(f"kc-sim serve did not start: {''.join(lines)} {err}".strip())
    return proc, found[0]


def stop_server(proc, sig: int | None = None) -> None:
    """Stop the server process (SIGTERM, or ``sig``) and wait for it."""
    if proc.poll() is None:
        if sig is None:
            proc.terminate()
        else:
            proc.send_signal(sig)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=30)


def agents_ms(response) -> float:
    """The agents' thinking the server reports for a request (Server-Timing), in ms."""
    m = re.search(r"agents;dur=([0-9.]+)", response.headers.get("server-timing", ""))
    return float(m.group(1)) if m else 0.0


def play_game(client, base: str, *, agent: str = "greedy", length: str = "1", seed: int | None = None,
              deadline: float = float("inf"), latencies: list | None = None) -> dict:
    """Open a game against ``agent`` and play it to the end with the first legal action each
    time (stop once a turn has made MAX_TURN_ACTIONS); returns the last state. Raises on any
    answer that is not a success. ``latencies`` collects (total ms, agents ms) per action."""
    body = {"opponents": [agent], "length": length}
    if seed is not None:
        body["seed"] = seed
    r = client.post(f"{base}api/games", json=body)
    r.raise_for_status()
    st = r.json()
    gid, done = st["game"], 0
    for _ in range(MAX_REQUESTS):
        if time.monotonic() > deadline:
            raise TimeoutError("the load test's time ran out")
        if st["phase"] == "match_over":
            return st
        if st["phase"] == "round_over":
            r = client.post(f"{base}api/games/{gid}/next")
        else:
            moves = [a for a in st["legal"] if a != "stop"]
            action = moves[0] if moves and len(st["this_turn"]) < MAX_TURN_ACTIONS else "stop"
            t0 = time.perf_counter()
            r = client.post(f"{base}api/games/{gid}/actions", json={"action": action})
            if latencies is not None:
                latencies.append(((time.perf_counter() - t0) * 1000, agents_ms(r)))
        r.raise_for_status()
        st = r.json()
        done += 1
    raise RuntimeError(f"game {gid[:6]}... did not end in {MAX_REQUESTS} requests")


@dataclass
class LoadReport:
    """What a load run saw."""

    players: int
    rounds: int
    finished: int = 0
    actions: list = field(default_factory=list)        # (total ms, agents ms) per action
    errors: list = field(default_factory=list)
    seconds: float = 0.0
    records: int = 0
    invalid: int = -1

    def quantile(self, q: float, net: bool = True) -> float:
        xs = sorted((t - a if net else t) for t, a in self.actions)
        if not xs:
            return float("nan")
        return xs[min(len(xs) - 1, int(q * len(xs)))]

    def lines(self) -> list[str]:
        out = [f"{self.players} scripted players, {self.rounds} round(s) each, against kc-sim serve on 127.0.0.1: "
               f"{self.finished} of {self.players} games finished in {self.seconds:.1f} s, {len(self.actions)} actions, "
               f"{len(self.errors)} errors",
               f"latency of a person's action, agents' thinking taken out: p50 {self.quantile(0.5):.1f} ms, "
               f"p99 {self.quantile(0.99):.1f} ms (with it: p50 {self.quantile(0.5, False):.1f} ms, "
               f"p99 {self.quantile(0.99, False):.1f} ms)",
               f"records saved: {self.records} (expected {self.players * self.rounds}); kc-sim check: "
               f"{'all valid' if self.invalid == 0 else f'{self.invalid} invalid'}"]
        out += [f"error: {e}" for e in self.errors[:5]]
        return out


def run_load(*, players: int = 50, rounds: int = 1, agent: str = "greedy", seconds: float = 300.0) -> LoadReport:
    """Start a server, have ``players`` scripted players finish ``rounds`` rounds each through
    its API at once, check the records it saved, stop it; every loop ends by ``seconds``."""
    import httpx

    from kc_sim.records.check import check_file

    report = LoadReport(players, rounds)
    with tempfile.TemporaryDirectory(prefix="kc-serve-load-") as tmp:
        data = Path(tmp) / "data"
        proc, base = start_server(data, agents=agent,
                                  extra=["--max-games", str(players + 10), "--max-games-per-client", str(players + 10)])
        try:
            lock, t0 = threading.Lock(), time.monotonic()
            deadline = t0 + seconds

            def player(i: int):
                lat: list = []
                try:
                    with httpx.Client(timeout=120) as client:
                        play_game(client, base, agent=agent, length=str(rounds),
                                  seed=1000 + i, deadline=deadline, latencies=lat)
                    with lock:
                        report.finished += 1
                except Exception as e:      # noqa: BLE001 - every failure is reported, none stops the others
                    with lock:
                        report.errors.append(f"player {i}: {type(e).__name__}: {' '.join(str(e).split())[:200]}")
                with lock:
                    report.actions.extend(lat)

            threads = [threading.Thread(target=player, args=(i,)) for i in range(players)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(max(1.0, deadline - time.monotonic() + 30))
            report.seconds = time.monotonic() - t0
        finally:
            stop_server(proc)
        path = data / "games.jsonl"
        n, problems = check_file(path) if path.exists() else (0, [])
        report.records, report.invalid = n, len({p.record for p in problems})
    return report
