"""``kc-sim play`` offers the round's analysis at its end: in a real terminal (pexpect) it asks
"Analyse this round?"; yes prints the judge's tables of the human seat's decisions and luck, no
(or Enter) goes on without them. Without a terminal it never asks unless ``--analyse`` says so."""

from __future__ import annotations

import json
import re
import subprocess

from tests.ui.test_terminal import KC_SIM, PROMPT, no_traceback, term, warm_numba_cache  # noqa: F401

ASK = r"Analyse this round\? \(takes a few seconds\) \[y/N\] "


def play_to_the_end(t) -> None:
    """Answer every move prompt with the first move until the round's end asks for the analysis."""
    t.expect(PROMPT, timeout=60, what="the first move prompt")
    for _ in range(400):
        t.child.sendline("1")
        if t.expect([PROMPT, ASK], timeout=60, what="a move prompt or the analysis offer") == 1:
            return
    t.fail("the round did not end")


def test_yes_prints_the_human_seats_analysis(term, tmp_path):  # noqa: F811 (the fixture)
    out = tmp_path / "game.jsonl"
    t = term("play", "--agents", "human,greedy", "--seed", "3", "--out", out.name)
    play_to_the_end(t)
    assert "Round over:" in t.raw
    t.child.sendline("y")
    t.expect(r"judged by planner", timeout=300, what="the analysis header")
    t.expect(r"saved to", timeout=300, what="the saved record's path")
    assert t.finish(timeout=30) == 0, t.screen()
    no_traceback(t)
    screen = "\n".join(t.lines)
    assert "decisions and luck" in screen and "error rate" in screen and "the result split" in screen
    # only the human seat (seat 0) is judged: its row, not greedy's
    assert re.search(r"│\s*0\s*│\s*human", screen) and not re.search(r"│\s*1\s*│\s*greedy", screen)
    rec = json.loads(out.read_text().splitlines()[0])
    assert rec["result"]["end"] in ("out", "blocked")


def test_no_goes_on_without_the_analysis(term, tmp_path):  # noqa: F811 (the fixture)
    t = term("play", "--agents", "human,greedy", "--seed", "3", "--out", "g.jsonl")
    play_to_the_end(t)
    t.child.sendline("")
    t.expect(r"saved to", timeout=30, what="the saved record's path")
    assert t.finish(timeout=30) == 0, t.screen()
    assert "judged by" not in t.raw and "Analysing" not in t.raw


def _piped(*args, stdin: str, cwd):
    return subprocess.run([str(KC_SIM), "play", *args], input=stdin, capture_output=True, text=True, cwd=cwd,
                          timeout=600)


def test_without_a_terminal_it_asks_only_when_told(tmp_path):
    moves = "1\n" * 400
    r = _piped("--agents", "human,greedy", "--seed", "3", "--out", "a.jsonl", stdin=moves, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "Round over:" in r.stdout and "Analyse this round" not in r.stdout and "judged by" not in r.stdout
    r = _piped("--agents", "greedy,random", "--seed", "3", "--out", "b.jsonl", "--analyse", "yes", stdin="",
               cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    said = " ".join(r.stdout.split())           # the header wraps at the console's width (a long path)
    assert "Analyse this round" not in said and "judged by planner" in said
    assert re.search(r"│\s*0\s*│\s*greedy", r.stdout) and re.search(r"│\s*1\s*│\s*random", r.stdout)
    r = _piped("--agents", "human,greedy", "--analyse", "maybe", stdin="", cwd=tmp_path)
    assert r.returncode == 2 and "bad --analyse 'maybe'" in r.stderr
