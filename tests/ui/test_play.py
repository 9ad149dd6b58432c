"""``kc-sim play`` and ``kc-sim replay``: scripted terminal sessions through stdin (junk
included), quitting on end of input, records that pass ``kc-sim check``, and replays
that reproduce the recorded result."""

import json
import subprocess
import sys

import pytest

from kc_sim.core import loop
from kc_sim.errors import UserError
from kc_sim.play.table.game import Game, why_illegal
from kc_sim.play.recording.recorded import RecordedRound
from kc_sim.play.driver.runner import play_matches
from kc_sim.play.recording.recorded import record_round
from kc_sim.play.driver.seat import SeatedAgents
from kc_sim.records.check import check_file
from kc_sim.records.format import write_records
from kc_sim.ui.render import move_lines, render_table
from kc_sim.ui.replay import run_replay
from kc_sim.ui.terminal import play_session

# the two commands on a small typer app, as kc_sim.cli registers them
APP = """
import sys, typer
from kc_sim.cli.play import play, replay
from kc_sim.errors import UserError
app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
app.command("play")(play)
app.command("replay")(replay)
try:
    rv = app(args=sys.argv[1:], standalone_mode=False, prog_name="kc-sim")
except UserError as e:
    print(f"kc-sim: error: {e}", file=sys.stderr)
    sys.exit(2)
sys.exit(rv if isinstance(rv, int) else 0)
"""

JUNK = ["", "hello", "99", "0", "ZZ>E", "7H>Q", "N>N", "W>NE", "help", "table", "-3", "7H >  E"]


def kc_sim(*args, stdin="", cwd=None):
    return subprocess.run([sys.executable, "-c", APP, *args], input=stdin, capture_output=True, text=True,
                          cwd=cwd, timeout=120)


def test_scripted_session_with_junk_finishes_a_round(tmp_path):
    out = tmp_path / "game.jsonl"
    script = "\n".join(JUNK + ["1"] * 400) + "\n"
    r = kc_sim("play", "--agents", "human,greedy", "--seed", "3", "--out", str(out), stdin=script)
    assert r.returncode == 0, r.stderr
    text = r.stdout
    # the picture: cross and corners, hand, other hand sizes, stock, scores, numbered moves
    for word in ("NW", "NE", "SW", "SE", "stock", "Your hand", "greedy", "score", "1) "):
        assert word in text
    # junk re-prompts with a reason
    assert "empty input" in text and "bad action 'hello'" in text and "no move numbered 99" in text
    assert "no move numbered 0" in text and "'ZZ' is neither a card nor a side" in text
    assert "is not a pile" in text and "a pile cannot move onto itself" in text
    assert "Type the number of a move" in text
    assert "Round over:" in text and f"saved to {out}" in text
    recs = [json.loads(x) for x in out.read_text().splitlines()]
    assert len(recs) == 1 and recs[0]["players"] == ["human", "greedy"] and recs[0]["seed"] == 3
    assert recs[0]["result"]["end"] in ("out", "blocked")
    n, problems = check_file(out)
    assert n == 1 and problems == []
    # replaying it reproduces its result
    r = kc_sim("replay", str(out), "--no-pause")
    assert r.returncode == 0, r.stderr
    assert "(as recorded)" in r.stdout


def test_end_of_input_quits_cleanly_and_saves_the_round(tmp_path):
    r = kc_sim("play", "--agents", "random,human,king-first", "--seed", "9", stdin="stop\nhelp\n", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "end of input" in r.stdout and "Traceback" not in r.stderr
    files = list((tmp_path / "results" / "play").glob("*.jsonl"))
    assert len(files) == 1 and f"saved to {files[0].relative_to(tmp_path)}" in r.stdout
    rec = json.loads(files[0].read_text())
    assert rec["result"]["end"] == "unfinished" and rec["players"] == ["random", "human", "king-first"]
    res = run_replay(files[0], echo=lambda s: None)
    assert res.matches is None and not res.round.game.over


def test_play_a_whole_match_between_agents(tmp_path):
    """No human seat: the agents play a match; the rounds are the engine's match rounds."""
    names = ["greedy", "agents.examples.my_python_agent:CautiousShedder", "random"]
    lines = []
    s = play_session(names, rules="classic,match=eliminate_25", seed=5, match=True, out=tmp_path / "m.jsonl",
                     input_fn=lambda p: pytest.fail("no one to ask"), echo=lines.append)
    rows, matches = play_matches(names, [5], "classic,match=eliminate_25")
    assert len(s.records) == matches[0, loop.M_ROUNDS]
    assert [r["seed"] for r in s.records] == [int(x) for x in rows[:, loop.C_SEED]]
    totals = [0, 0, 0]
    for rec, row in zip(s.records, rows):
        seats = [m for m in range(3) if row[loop.C_PENALTY + m] >= 0]
        for k, m in enumerate(seats):
            totals[m] += rec["result"]["penalties"][k]
    assert totals == [int(x) for x in matches[0, loop.M_TOTAL:loop.M_TOTAL + 3]]
    assert any(x.startswith("Match over") for x in lines)
    assert check_file(tmp_path / "m.jsonl")[1] == []


def test_in_process_session_records_what_was_played(tmp_path):
    moves = iter(["1"] * 300)
    lines = []
    s = play_session("greedy,human", rules="draw_first", seed=12, out=tmp_path,
                     input_fn=lambda p: next(moves), echo=lines.append)
    assert not s.quit and s.path.parent == tmp_path and s.path.exists()
    rec = s.records[0]
    assert rec["rules"]["draw"] == "start" and check_file(s.path)[1] == []
    assert any(x.startswith("You drew") for x in lines)   # draw=start: told at the start of the turn


@pytest.mark.parametrize("rules", ["classic", "draw_first", "classic,decks=2,draw=if_stuck"])
def test_replay_reproduces_recorded_rounds(rules, tmp_path):
    names = ["greedy", "random", "pile-merger"]
    recs = [record_round(names, seed, rules) for seed in (1, 2)]
    path = write_records(tmp_path / "r.jsonl", recs)
    for k in range(2):
        lines = []
        res = run_replay(path, k, echo=lines.append)
        assert res.matches is True, lines[-3:]
        g = res.round.game
        assert [g.end, g.winner, g.penalties] == [recs[k]["result"][x] for x in ("end", "winner", "penalties")]
        assert res.round.turns == recs[k]["turns"]
        assert sum(1 for x in lines if x.startswith("Turn ")) == len(recs[k]["turns"])


def test_replay_reports_a_wrong_result_and_bad_input(tmp_path):
    rec = record_round(["greedy", "random"], 4, "classic")
    rec["result"]["penalties"] = [p + 1 for p in rec["result"]["penalties"]]
    path = write_records(tmp_path / "bad.jsonl", [rec])
    r = kc_sim("replay", str(path), "--no-pause")
    assert r.returncode == 1 and "DIFFERS from the record: penalties" in r.stdout
    r = kc_sim("replay", str(path), "--round", "4")
    assert r.returncode == 2 and "bad --round 4" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    turn = next(t for t in rec["turns"] if t["actions"])
    turn["actions"][0] = "KS>NW" if turn["actions"][0] != "KS>NW" else "QS>NW"
    write_records(path, [rec])
    with pytest.raises(UserError, match="is illegal"):
        run_replay(path, echo=lambda s: None)


def test_replay_pauses_between_turns_and_q_stops(tmp_path):
    rec = record_round(["greedy", "random"], 6, "classic")
    path = write_records(tmp_path / "r.jsonl", [rec])
    r = kc_sim("replay", str(path), "--pause", stdin="\n\nq\n")
    assert r.returncode == 0 and "replay stopped" in r.stdout
    assert r.stdout.count("Turn ") == 3


def test_bad_play_arguments_are_one_line_and_exit_2(tmp_path):
    for args, needle in [(["--agents", "human"], "at least two"),
                         (["--agents", "human,gredy"], "unknown agent 'gredy'"),
                         (["--agents", "human,greedy,random,greedy,random"], "bad player count 5"),
                         (["--rules", "draw=later"], "expected one of end, start, if_stuck")]:
        r = kc_sim("play", *args, stdin="", cwd=tmp_path)
        assert r.returncode == 2 and needle in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_why_illegal_explains():
    g = Game.from_position([["7H", "KS", "3C", "5D"], ["2C"]], [["8S"], ["9D"], [], ["AC"]], ["4C", "6C"],
                           rules="classic,must_play_kings=true")
    assert why_illegal(g, g.legal_actions()[0]) is None
    from kc_sim.game.actions import parse_action as pa

    assert "not in your hand" in why_illegal(g, pa("QH>N"))
    assert "does not fit on N's top 8S" in why_illegal(g, pa("5D>N"))
    assert "nothing goes on an ace" in why_illegal(g, pa("5D>W"))
    assert "takes nothing but a king" in why_illegal(g, pa("7H>NE"))
    assert "no pile to move" in why_illegal(g, pa("S>N"))
    assert "onto an empty side" in why_illegal(g, pa("N>S"))
    assert "must_play_kings" in why_illegal(g, pa("stop"))


def test_picture_and_recorded_round():
    g = Game(players=3, rules="classic", seed=21)
    text = render_table(g, 0, names=["you", "greedy", "random"], scores=[3, 0, 12], you=True)
    assert "Your hand (7)" in text and "score  12" in text and "<- to play" in text
    assert all(f"seat {s}" in text for s in range(3))
    assert len(move_lines(g)) == len(g.legal_actions())
    rr = RecordedRound(g)
    players = SeatedAgents(["greedy", "random", "agents.examples.my_python_agent:CautiousShedder"], "classic")
    players.new_match()
    players.new_round(21, [0, 1, 2])
    while not g.over:
        rr.play(players.act(g))
    rec = rr.record(players.names)
    ref = record_round(players.names, 21, "classic")
    assert rec["turns"] == ref["turns"] and rec["result"] == ref["result"]
