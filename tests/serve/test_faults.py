"""Faults and load: the server killed with -9 while players are mid-game keeps every finished
round whole (``kc-sim check`` passes, no half-written line) and, started again on the same
folder, answers the old games cleanly as gone; a torn last line is set aside; 50 scripted
players at once complete their rounds with no error. No test reads a clock's value: every
wait is for a condition, with generous bounds."""

import json
import signal
import threading
import time

import httpx

from kc_sim.records.check import check_file
from kc_sim.serve.loadtest import play_game, run_load
from kc_sim.serve.storage import RecordStore
from tests.serve.conftest import Server


def whole_lines(path) -> list[dict]:
    data = path.read_bytes()
    assert data.endswith(b"\n"), "the record file ends inside a line"
    return [json.loads(line) for line in data.decode("utf-8").splitlines()]


def test_kill_9_mid_game_keeps_every_finished_round_whole(tmp_path):
    data = tmp_path / "data"
    s = Server(data, agents="greedy,merger", extra=["--max-games-per-client", "100"])
    finished, stop = [], threading.Event()

    def player(i):
        with httpx.Client(timeout=120) as c:
            for k in range(200):
                if stop.is_set():
                    return
                try:
                    st = play_game(c, s.base, agent="greedy" if i % 2 else "merger", seed=100 * i + k)
                except Exception:     # the server went away under it: expected once it is killed
                    return
                finished.append(st["game"])

    threads = [threading.Thread(target=player, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for _ in range(6000):               # until some rounds are saved and more are being played
        if len(finished) >= 8:
            break
        time.sleep(0.05)
    assert len(finished) >= 8
    with httpx.Client(timeout=60) as c:
        open_game = c.post(f"{s.base}api/games", json={"opponents": ["greedy"], "seed": 9}).json()["game"]
    s.stop(signal.SIGKILL)
    stop.set()
    for t in threads:
        t.join(120)
    assert s.proc.returncode == -signal.SIGKILL
    recs = whole_lines(s.records)
    assert len(recs) >= len(finished)
    n, problems = check_file(s.records)
    assert n == len(recs) and not problems
    again = Server(data, agents="greedy")
    try:
        with httpx.Client(timeout=60) as c:
            r = c.get(f"{again.base}api/games/{open_game}")
            assert r.status_code == 404 and "restarted" in r.json()["error"]
            play_game(c, again.base, seed=1)
        after = whole_lines(again.records)
        assert after[:len(recs)] == recs and len(after) == len(recs) + 1
        assert not check_file(again.records)[1]
    finally:
        again.stop()


def test_a_torn_last_line_is_set_aside_and_appends_stay_whole(tmp_path):
    from kc_sim.play.recording.recorded import record_round

    rec = record_round(["greedy", "random"], 3, "classic")
    store = RecordStore(tmp_path)
    store.append(rec)
    with open(store.path, "ab") as f:
        f.write(json.dumps(rec).encode()[:100])       # a line cut short (a power cut, an outside writer)
    again = RecordStore(tmp_path)
    assert again.torn == 1 and (tmp_path / "games.jsonl.torn").read_bytes().startswith(b'{"format"')
    again.append(rec)
    assert whole_lines(again.path) == [rec, rec] and not check_file(again.path)[1]


def test_fifty_players_at_once_complete_their_rounds(capsys):
    report = run_load(players=50, rounds=1, agent="greedy", seconds=900)
    with capsys.disabled():
        print("\n" + "\n".join(report.lines()))
    assert not report.errors and report.finished == 50
    assert report.records == 50 and report.invalid == 0
    assert len(report.actions) >= 50
