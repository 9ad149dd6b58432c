"""Replay pages (``kc-sim replay --html``): the steps a record is replayed into match a
plain replay of the record, decision by decision, for every variant family, player count,
two decks and unfinished records; the page is self-contained (nothing fetched) and bad
input is a one-line error."""

import json
import re

import pytest

from kc_sim.cli.root import main
from kc_sim.core import layout
from kc_sim.game.actions import parse_action
from kc_sim.game.cards import card_text, sort_hand
from kc_sim.play.table.game import Game
from kc_sim.play.recording.recorded import RecordedRound, record_round
from kc_sim.play.seeing import replay_doc, start_position
from kc_sim.records.format import write_records

VARIANTS = [  # (rules, players, agents): every variant family, 2 to 6 players, two decks
    ("classic", 2, ["greedy", "random"]),
    ("draw_first", 3, ["greedy", "random", "merger"]),
    ("classic,draw=if_stuck,scoring=face", 4, ["greedy", "random", "greedy", "king-first"]),
    ("classic,layout_kings=to_corner,must_play_kings=true", 3, ["random", "greedy", "random"]),
    ("classic,decks=2", 6, ["greedy", "random", "greedy", "random", "merger", "greedy"]),
]


def table_of(game) -> dict:
    """What is on the table and in the hands, as the page's data attributes spell it."""
    return {
        "piles": [" ".join(card_text(c) for c in p) for p in game.piles],
        "hands": [" ".join(card_text(c) for c in sort_hand(game.hand(s))) for s in range(game.players)],
        "stock": len(game.stock),
        "seat": None if game.over else game.seat,
    }


def expected_tables(rec: dict) -> tuple[list[dict], list[int]]:
    """The oracle: the record played again action by action on a fresh Game (one entry per
    decision: the start, each action, each stop), and the decision where each turn starts."""
    g = start_position(rec)
    out, starts = [table_of(g)], []
    unfinished = rec["result"]["end"] == "unfinished"
    for t, turn in enumerate(rec["turns"]):
        starts.append(len(out) - 1)
        for text in turn["actions"]:
            g.play(parse_action(text))
            out.append(table_of(g))
        if not g.over and not (unfinished and t == len(rec["turns"]) - 1):
            g.play(layout.STOP)
            out.append(table_of(g))
    return out, starts


def doc_tables(doc: dict) -> list[dict]:
    return [{"piles": [" ".join(p) for p in s["piles"]], "hands": [" ".join(h) for h in s["hands"]],
             "stock": s["stock"], "seat": s["seat"]} for s in doc["steps"]]


def unfinished_record(seed: int = 4, actions: int = 5) -> dict:
    """A round stopped mid-turn, as ``kc-sim play`` saves it when the player quits."""
    rr = RecordedRound(Game(3, "classic", seed))
    for _ in range(actions):
        rr.play(rr.game.legal_actions()[0])
    return rr.record(["you", "greedy", "random"])


@pytest.mark.parametrize("rules,players,agents", VARIANTS)
def test_steps_follow_the_record_decision_by_decision(rules, players, agents):
    rec = record_round(agents, 1000 + players, rules)
    doc = replay_doc(rec)
    want, starts = expected_tables(rec)
    assert doc_tables(doc) == want
    assert doc["turn_starts"] == starts and len(starts) == len(rec["turns"])
    assert doc["matches"] is True and "(as recorded)" in doc["result"]
    assert doc["names"] == rec["players"] and doc["players"] == players
    # every placement and pile move is named and highlighted in the step after it
    k = 1
    for turn in rec["turns"]:
        for text in turn["actions"]:
            last = doc["steps"][k]["last"]
            assert text in last["text"] and last["cards"]
            on_table = {c for p in doc["steps"][k]["piles"] for c in p}
            assert set(last["cards"]) <= on_table
            k += 1
        if k < len(doc["steps"]) and doc["steps"][k - 1]["seat"] is not None:
            assert "stops" in doc["steps"][k]["last"]["text"]
            k += 1
    # the final step shows the recorded penalties
    assert doc["steps"][-1]["penalties"] == rec["result"]["penalties"]


def test_an_unfinished_record_replays_up_to_where_it_stopped():
    rec = unfinished_record()
    assert rec["result"]["end"] == "unfinished"
    doc = replay_doc(rec)
    want, _ = expected_tables(rec)
    assert doc_tables(doc) == want and doc["matches"] is None
    assert doc["steps"][-1]["seat"] is not None and "unfinished" in doc["result"]


def test_the_page_is_self_contained_and_carries_the_steps(tmp_path, capsys):
    recs = [record_round(["greedy", "random", "merger", "greedy"], s, "classic") for s in (5, 6)]
    path = write_records(tmp_path / "r.jsonl", recs)
    out = tmp_path / "page.html"
    assert main(["replay", str(path), "--round", "1", "--html", str(out)]) == 0
    said = capsys.readouterr().out
    assert "replay page written to" in said and "(as recorded)" in said
    page = out.read_text(encoding="utf-8")
    # nothing to fetch: no external scripts, styles, images or fonts
    assert not re.search(r"<(script|link|img|iframe)[^>]+(src|href)=", page)
    assert "http://" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "") and "https://" not in page
    blob = re.search(r'<script type="application/json" data-role="doc">(.*?)</script>', page, re.S).group(1)
    doc = json.loads(blob)
    assert doc_tables(doc) == expected_tables(recs[1])[0]
    assert len(page) < 200_000


def test_the_title_names_the_seed_that_was_typed(tmp_path, capsys):
    """kc-sim record --seed 7 writes ``run_seed`` 7 into each record; the page's title and the
    terminal replay name it (with the round's own deal seed, derived from it), not only the
    derived seed, which nobody typed. A record without it (or with a non-number) shows its seed."""
    path = tmp_path / "r.jsonl"
    assert main(["record", "-o", str(path), "--rounds", "2", "--seed", "7", "--agents", "greedy,random"]) == 0
    recs = [json.loads(x) for x in path.read_text().splitlines()]
    assert [r["run_seed"] for r in recs] == [7, 7] and recs[1]["seed"] != 7
    out = tmp_path / "page.html"
    assert main(["replay", str(path), "--round", "1", "--html", str(out)]) == 0
    title = re.search(r"<title>(.*?)</title>", out.read_text(encoding="utf-8")).group(1)
    assert f"--seed 7, match 0, round 1 (deal seed {recs[1]['seed']})" in title
    capsys.readouterr()
    assert main(["replay", str(path), "--round", "0"]) == 0
    assert "--seed 7, match 0, round 0 (deal seed" in capsys.readouterr().out.splitlines()[0]
    from kc_sim.ui.replay import record_label

    assert record_label({**recs[0], "run_seed": "<b>"}) == f"seed {recs[0]['seed']}, match 0, round 0"


def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys):
    rec = record_round(["greedy", "random"], 9, "classic")
    path = write_records(tmp_path / "r.jsonl", [rec])
    assert main(["replay", str(path), "--round", "3", "--html", str(tmp_path / "x.html")]) == 2
    assert "bad --round 3" in capsys.readouterr().err
    bad = dict(rec, turns=[dict(rec["turns"][0], seat=1 - rec["turns"][0]["seat"])] + rec["turns"][1:])
    path2 = write_records(tmp_path / "bad.jsonl", [bad])
    assert main(["replay", str(path2), "--html", str(tmp_path / "y.html")]) == 2
    err = capsys.readouterr().err.strip()
    assert "turn 0" in err and "seat" in err and "\n" not in err and not (tmp_path / "y.html").exists()


def test_a_recorded_round_shows_itself_as_a_replay_in_jupyter():
    rr = RecordedRound(Game(2, "classic", 8))
    for _ in range(6):
        rr.play(rr.game.legal_actions()[0])
    page = rr._repr_html_()
    assert 'class="kc-replay"' in page and "<script>" in page
    blob = re.search(r'data-role="doc">(.*?)</script>', page, re.S).group(1)
    doc = json.loads(blob)
    assert doc_tables(doc)[-1] == table_of(rr.game)
