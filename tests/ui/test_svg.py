"""SVG positions: one render per variant family (the SVG parses as XML and shows the
right cards on every pile, in every shown hand, and the stock size), observers' hidden
hands, Jupyter's ``_repr_svg_``/``_repr_html_`` on a Game, and ``kc-sim render``."""

import xml.etree.ElementTree as ET

import pytest

from kc_sim.cli.root import main
from kc_sim.game.cards import PILES, card_text, sort_hand
from kc_sim.play.table.game import Game
from kc_sim.play.recording.recorded import RecordedRound, record_round
from kc_sim.play.table.position import game_svg
from kc_sim.records.format import write_records

SVG = "{http://www.w3.org/2000/svg}"
FAMILIES = [  # (rules, players)
    ("classic", 2), ("draw_first", 3), ("classic,draw=if_stuck", 4), ("classic,scoring=face", 3),
    ("classic,layout_kings=to_corner,king_on_empty_side=false", 2), ("classic,must_play_kings=true", 4),
    ("classic,decks=2", 5), ("classic,decks=2", 8),
]


def read_svg(text: str) -> dict:
    """Piles, hands and stock as the SVG's data attributes say, plus the cards drawn."""
    root = ET.fromstring(text)
    piles, hands, drawn = {}, {}, {}
    for g in root.iter(f"{SVG}g"):
        cls = g.get("class", "")
        if cls == "pile":
            piles[g.get("data-pile")] = g.get("data-cards")
            drawn[g.get("data-pile")] = " ".join(c.get("data-card") for c in g if c.get("data-card"))
        elif cls == "hand":
            hands[int(g.get("data-seat"))] = (g.get("data-cards"), g.get("data-hidden"), int(g.get("data-count")),
                                               " ".join(c.get("data-card") for c in g if c.get("data-card")))
    stock = next(g for g in root.iter(f"{SVG}g") if g.get("data-role") == "stock")
    return {"piles": piles, "drawn": drawn, "hands": hands, "stock": int(stock.get("data-count"))}


def advance(g: Game, decisions: int) -> Game:
    for _ in range(decisions):
        if g.over:
            break
        legal = g.legal_actions()
        g.play(legal[len(legal) // 2])
    return g


@pytest.mark.parametrize("rules,players", FAMILIES)
def test_render_shows_the_cards_of_the_position(rules, players):
    g = advance(Game(players, rules, 31 + players), 25)
    seen = read_svg(game_svg(g, names=[f"p{s}" for s in range(players)]))
    for p, name in enumerate(PILES):
        want = " ".join(card_text(c) for c in g.pile(p))
        assert seen["piles"][name] == want and seen["drawn"][name] == want
    for s in range(players):
        want = " ".join(card_text(c) for c in sort_hand(g.hand(s)))
        assert seen["hands"][s] == (want, "false", len(g.hand(s)), want)
    assert seen["stock"] == len(g.stock)
    # an observer sees its own hand only; the others are face down (counts, no cards)
    obs = read_svg(game_svg(g, show=1))
    assert obs["hands"][1][1] == "false" and obs["hands"][1][0] == seen["hands"][1][0]
    for s in set(range(players)) - {1}:
        assert obs["hands"][s] == ("", "true", len(g.hand(s)), "")


def test_the_svg_names_the_seats_and_the_seat_to_play():
    g = advance(Game(3, "classic", 2), 4)
    text = game_svg(g, names=["alice", "greedy", "random"], scores=[3, 0, 12])
    assert "alice" in text and "score 12" in text and "\u25b6 to play" in text and "dealer" in text
    assert f"seat {g.seat} (" in text      # the status line names the seat to act


def test_game_shows_itself_in_jupyter():
    g = advance(Game(2, "classic", 5), 9)
    svg = g._repr_svg_()
    assert read_svg(svg)["stock"] == len(g.stock)
    assert g._repr_html_().startswith("<div><svg")
    rr = RecordedRound(Game(4, "classic,decks=2", 6))
    for _ in range(7):
        rr.play(rr.game.legal_actions()[0])
    seen = read_svg(rr._repr_svg_())
    assert seen["piles"] == {PILES[p]: " ".join(card_text(c) for c in rr.game.pile(p)) for p in range(8)}


def test_kc_sim_render_writes_the_position_before_a_turn(tmp_path, capsys):
    rec = record_round(["greedy", "random", "merger", "greedy"], 78, "classic")
    assert len(rec["turns"]) > 3
    path = write_records(tmp_path / "r.jsonl", [record_round(["greedy", "random"], 1, "classic"), rec])
    out = tmp_path / "pos.svg"
    assert main(["render", str(path), "--round", "1", "--turn", "3", "--hands", "to-play", "-o", str(out)]) == 0
    assert "position written to" in capsys.readouterr().out
    seen = read_svg(out.read_text(encoding="utf-8"))
    # the oracle: the record's first two turns played on a fresh Game
    from kc_sim.play.seeing import start_position

    g = start_position(rec)
    for turn in rec["turns"][:2]:
        for a in turn["actions"]:
            g.play(a)
        g.play("stop")
    assert seen["piles"] == {PILES[p]: " ".join(card_text(c) for c in g.pile(p)) for p in range(8)}
    assert [h[1] for _, h in sorted(seen["hands"].items())] == ["false" if s == g.seat else "true" for s in range(4)]
    # default: the end of the record, every hand shown
    assert main(["render", str(path), "--round", "1", "-o", str(out)]) == 0
    end = read_svg(out.read_text(encoding="utf-8"))
    assert [h[2] for _, h in sorted(end["hands"].items())] == [0 if s == rec["result"]["winner"] else h[2]
                                                             for s, h in sorted(end["hands"].items())]
    assert all(h[1] == "false" for h in end["hands"].values())
    for bad, said in ((["--round", "1", "--hands", "7"], "bad --hands"), (["--round", "1", "--turn", "0"],
                      "bad --turn 0"), (["--round", "5"], "bad --round 5")):
        assert main(["render", str(path), *bad, "-o", str(out)]) == 2
        assert said in capsys.readouterr().err


def test_a_hidden_hand_keeps_the_card_it_drew_secret():
    from kc_sim.play.seeing import replay_doc
    from kc_sim.picture.svg import card_label, position_svg

    rec = record_round(["greedy", "random", "greedy"], 12, "classic")
    doc = replay_doc(rec)
    t = 1                                   # the step where turn 2 starts: seat 0 has stopped and drawn
    pos = doc["steps"][doc["turn_starts"][t]]
    drew, seat = rec["turns"][t - 1]["drew"], rec["turns"][t - 1]["seat"]
    assert drew is not None and pos["last"]["where"] == f"hand {seat}"
    assert f"draws {card_label(drew)}" in position_svg(pos, show="all")
    assert f"draws {card_label(drew)}" in position_svg(pos, show=seat)
    other = position_svg(pos, show=pos["seat"])
    assert "draws a card" in other and card_label(drew) not in other.split('data-role="last">')[1].split("<")[0]
