"""The JSON API of ``kc-sim serve`` against a real server process: a whole round against
greedy, the records it keeps (valid under ``kc-sim check``), hidden cards that never reach the
person's seat, and every kind of bad request answered with a 4xx and a one-line JSON error."""

import json
import re

import pytest

from kc_sim.game.cards import PILES
from kc_sim.records.check import check_file
from kc_sim.serve.loadtest import play_game
from tests.serve.conftest import Server

DECK = {r + s for r in "A23456789TJQK" for s in "CDHS"}
GLYPH = {"\u2663": "C", "\u2666": "D", "\u2665": "H", "\u2660": "S"}
CARD_TOKEN = re.compile(r"(?<![A-Za-z0-9])([2-9TJQKA][CDHS])(?![A-Za-z0-9])")
SVG_LABEL = re.compile(r"(10|[2-9JQKA])([\u2663\u2666\u2665\u2660])")


def new_game(client, server, **body):
    body.setdefault("opponents", ["greedy"])
    r = client.post(f"{server.base}api/games?svg=true", json=body)
    assert r.status_code == 201, r.text
    return r.json()


def act(client, server, gid, action, svg=True):
    return client.post(f"{server.base}api/games/{gid}/actions?svg={'true' if svg else 'false'}",
                       json={"action": action})


def one_line_error(r, status):
    assert r.status_code == status, (r.status_code, r.text)
    body = r.json()
    assert set(body) == {"error"} and isinstance(body["error"], str) and body["error"]
    assert "\n" not in body["error"] and "Traceback" not in r.text
    assert r.headers["content-type"].startswith("application/json")
    return body["error"]


def test_a_whole_round_against_greedy_is_saved_and_valid(server, client):
    st = new_game(client, server, seed=11, length="1", name="Ada <b>Lovelace</b>")
    gid = st["game"]
    assert st["phase"] == "your_turn" and st["to_play"] == st["you"] and "stop" in st["legal"]
    assert st["players"][st["you"]]["name"].startswith("Ada b Lovelace b")
    assert "<b>" not in st["svg"] and "<svg" in st["svg"]
    for _ in range(2000):
        if st["phase"] != "your_turn":
            break
        moves = [a for a in st["legal"] if a != "stop"]
        r = act(client, server, gid, moves[0] if moves and len(st["this_turn"]) < 30 else "stop")
        assert r.status_code == 200, r.text
        st = r.json()
        assert st["to_play"] in (st["you"], None)
        for step in st["steps"]:
            assert step["seat"] != st["you"] and "svg" in step
    assert st["phase"] == "match_over" and st["result"]["saved"] and st["result"]["analysis"]["available"] is True
    assert "kc-sim analyse" in st["result"]["analysis"]["how"]
    rec = client.get(f"{server.base}api/games/{gid}/rounds/0").json()
    assert rec["format"] == "kc-sim/game/1" and rec["seed"] == rec["seed"]
    assert rec["players"][st["you"]] == "Ada b Lovelace b" and rec["players"][1 - st["you"]] == "greedy"
    assert rec["result"]["penalties"] == st["result"]["penalties"]
    lines = server.records.read_text(encoding="utf-8").splitlines()
    assert json.loads(lines[-1]) == rec
    n, problems = check_file(server.records)
    assert n == len(lines) and not problems
    # the round's analysis, for the human's seat: the same figures kc-sim analyse gives for that record
    r = client.get(f"{server.base}api/games/{gid}/rounds/0/analysis", timeout=300)
    assert r.status_code == 200, r.text
    an = r.json()
    assert an["round"] == 0 and an["available"] and an["seat"] == st["you"] and an["evaluator"]
    assert an["decisions"] >= an["forced"] >= 0 and 0 <= an["accuracy"] <= 100 and an["error_rate"] >= 0
    assert set(an["labels"]) == {"blunder", "mistake", "inaccuracy"}
    assert all(d["loss"] > 0 and d["loss_ci"][0] > 0 and d["label"] for d in an["costliest"])
    from kc_sim.judge.analyse import analyse_file
    seat = analyse_file(server.records, rounds=[len(lines) - 1], seats=[st["you"]], budget=128,
                        luck=False)["seats"][str(st["you"])]
    assert (seat["error_rate"], seat["accuracy"], seat["labels"]) == (an["error_rate"], an["accuracy"], an["labels"])
    # what the page's viewer draws: the round replayed, a graph point per judged decision of the seat
    steps = an["replay"]["steps"]
    assert len(steps) >= 1 + sum(len(t["actions"]) for t in rec["turns"]) and steps[-1]["penalties"]
    points = an["graph"]["points"]
    assert an["graph"]["seats"] == [st["you"]] and len(points) == an["decisions"] - an["forced"]
    assert all(p["kind"] == "decision" and steps[p["step"]]["seat"] == st["you"] for p in points)
    assert all(steps[d["step"]]["seat"] == st["you"] and d["step"] in {p["step"] for p in points} for d in an["costliest"])
    assert client.get(f"{server.base}api/games/{gid}/rounds/0/analysis").json() == an      # kept, not redone
    assert client.delete(f"{server.base}api/games/{gid}").json() == {"game": gid, "ended": True}


def test_a_three_round_game_names_the_human_seat_human(server, client):
    st = play_game(client, server.base, agent="merger", length="3", seed=5)
    assert st["phase"] == "match_over" and st["rounds_played"] == 3
    recs = [client.get(f"{server.base}api/games/{st['game']}/rounds/{k}").json() for k in range(3)]
    assert [r["round"] for r in recs] == [0, 1, 2]
    for r in recs:
        assert r["players"][r["served"]["human_seat"]] == "human"
    assert sum(r["result"]["penalties"][r["served"]["human_seat"]] for r in recs) == \
        st["match"]["totals"][0]
    assert len({r["served"]["game"] for r in recs}) == 1


def visible_cards(st) -> set:
    return set(st["hand"]) | {c for pile in st["piles"].values() for c in pile}


def cards_in(st) -> set:
    """Every card text anywhere in a state: its strings (not the game id) and the SVG's
    card attributes and labels."""
    found = set()

    def walk(x, key=None):
        if isinstance(x, dict):
            for k, v in x.items():
                walk(v, k)
        elif isinstance(x, list):
            for v in x:
                walk(v, key)
        elif isinstance(x, str) and key != "game":
            if key == "svg":
                found.update(r.replace("10", "T") + GLYPH[s] for r, s in SVG_LABEL.findall(x))
                x = re.sub(r'(?:transform|x|y|width|height|viewBox)="[^"]*"', "", x)
            found.update(CARD_TOKEN.findall(x))

    walk(st)
    return found


@pytest.mark.parametrize("opponents,rules", [(["greedy"], "classic"), (["greedy", "merger", "random"], "draw=start"),
                                             (["merger", "random"], "draw_first")])
def test_no_state_ever_shows_a_hidden_card(server, client, opponents, rules):
    for seed in (1, 2):
        st = new_game(client, server, opponents=opponents, rules=rules, seed=seed)
        gid = st["game"]
        for _ in range(2000):
            if st["phase"] != "your_turn":
                break
            hidden = DECK - visible_cards(st)
            assert len(hidden) == 52 - len(st["hand"]) - sum(map(len, st["piles"].values()))
            leaked = cards_in(st) & hidden
            assert not leaked, f"hidden cards in the state: {leaked}"
            again = client.get(f"{server.base}api/games/{gid}?svg=true").json()
            assert not cards_in(again) & hidden
            moves = [a for a in st["legal"] if a != "stop"]
            st = act(client, server, gid, moves[-1] if moves and len(st["this_turn"]) < 30 else "stop").json()
        assert st["phase"] == "match_over"


def test_every_bad_request_is_a_4xx_with_one_line(server, client):
    b = server.base
    st = new_game(client, server, seed=3)
    gid = st["game"]
    cases = [
        (client.get(f"{b}api/games/no-such-game"), 404),
        (client.post(f"{b}api/games/no-such-game/actions", json={"action": "stop"}), 404),
        (client.post(f"{b}api/games", content=b"{not json", headers={"content-type": "application/json"}), 422),
        (client.post(f"{b}api/games", json={}), 422),
        (client.post(f"{b}api/games", json={"opponents": []}), 422),
        (client.post(f"{b}api/games", json={"opponents": ["greedy"] * 4}), 422),
        (client.post(f"{b}api/games", json={"opponents": ["greedy"], "evil": 1}), 422),
        (client.post(f"{b}api/games", json={"opponents": ["greedy"], "length": "7"}), 422),
        (client.post(f"{b}api/games", json={"opponents": ["greedy"], "seed": -1}), 422),
        (client.post(f"{b}api/games", json={"opponents": "greedy"}), 422),
        (client.post(f"{b}api/games", json={"opponents": ["planner"]}), 400),
        (client.post(f"{b}api/games", json={"opponents": ["agents/x.py:Evil"]}), 400),
        (client.post(f"{b}api/games", json={"opponents": ["net:/etc/passwd"]}), 400),
        (client.post(f"{b}api/games", json={"opponents": ["greedy"], "rules": "draw=never"}), 400),
        (client.post(f"{b}api/games", json={"opponents": ["greedy"], "rules": "<script>x</script>"}), 400),
        (client.post(f"{b}api/games", json={"opponents": ["greedy"], "rules": "x" * 300}), 422),
        (act(client, server, gid, "zz"), 400),
        (act(client, server, gid, "KS>Q"), 400),
        (client.post(f"{b}api/games/{gid}/actions", json={"action": 7}), 422),
        (client.post(f"{b}api/games/{gid}/actions", json={}), 422),
        (client.post(f"{b}api/games/{gid}/next"), 409),
        (client.get(f"{b}api/games/{gid}/rounds/0"), 404),
        (client.get(f"{b}api/games/{gid}/rounds/x"), 422),
        (client.post(f"{b}api/games", content=b"{" + b" " * 20000 + b"}",
                     headers={"content-type": "application/json"}), 413),
        (client.post(f"{b}api/games", content=iter([b'{"opponents":', b'["greedy"]}']),
                     headers={"content-type": "application/json"}), 411),
        (client.get(f"{b}api/nothing-here"), 404),
        (client.get(f"{b}static/../app.py"), 404),
        (client.get(f"{b}static/app.py"), 404),
        (client.put(f"{b}api/games"), 405),
        (client.delete(f"{b}api/games/no-such-game"), 404),
    ]
    for i, (r, status) in enumerate(cases):
        try:
            one_line_error(r, status)
        except AssertionError as e:
            raise AssertionError(f"case {i}: {e}") from None
    # an illegal action says why, in words, and changes nothing
    illegal = next(f"{c}>{p}" for c in st["hand"] for p in PILES if f"{c}>{p}" not in st["legal"])
    why = one_line_error(act(client, server, gid, illegal), 409)
    assert why.startswith(f"{illegal} is not legal now: ")
    assert client.get(f"{b}api/games/{gid}").json()["hand"] == st["hand"]
    not_mine = next(c for c in DECK - visible_cards(st))
    assert "is not in your hand" in one_line_error(act(client, server, gid, f"{not_mine}>N"), 409)
    # out of turn: the round is over
    done = play_game(client, b, seed=4)
    assert "the match is over" in one_line_error(act(client, server, done["game"], "stop"), 409)
    assert "no more rounds" in one_line_error(client.post(f"{b}api/games/{done['game']}/next"), 409)


def test_games_per_client_and_open_games_are_bounded(tmp_path, client):
    s = Server(tmp_path / "data", agents="random", extra=["--max-games-per-client", "2", "--max-games", "3"])
    try:
        ids = [client.post(f"{s.base}api/games", json={"opponents": ["random"]}).json()["game"] for _ in range(2)]
        assert len(set(ids)) == 2 and all(len(i) >= 24 for i in ids)
        why = one_line_error(client.post(f"{s.base}api/games", json={"opponents": ["random"]}), 429)
        assert "limit per client" in why
        client.delete(f"{s.base}api/games/{ids[0]}")
        assert client.post(f"{s.base}api/games", json={"opponents": ["random"]}).status_code == 201
    finally:
        s.stop()


def test_security_headers_the_page_and_the_schema(server, client):
    for path in ("", "static/app.js", "static/replay.js", "static/app.css", "api/config", "api/games/none"):
        r = client.get(server.base + path)
        csp = r.headers["content-security-policy"]
        assert "script-src 'self'" in csp and "default-src 'none'" in csp and "unsafe-inline" not in csp
        assert r.headers["x-content-type-options"] == "nosniff"
    js = client.get(f"{server.base}static/replay.js")
    assert js.headers["content-type"].startswith("text/javascript") and '"cw": 44' in js.text and "__" not in js.text
    page = client.get(server.base).text
    assert '<script src="/static/app.js"' in page and "<script>" not in page and "http" not in page.split("<body>")[0]
    schema = client.get(f"{server.base}api/openapi.json").json()
    assert {"/api/games", "/api/games/{gid}", "/api/games/{gid}/actions", "/api/games/{gid}/next",
            "/api/games/{gid}/rounds/{k}", "/api/games/{gid}/rounds/{k}/analysis", "/api/config"} <= set(schema["paths"])
    cfg = client.get(f"{server.base}api/config").json()
    assert [a["name"] for a in cfg["agents"]] == ["greedy", "merger", "random"]
    assert cfg["analysis"]["available"] is True


def test_a_game_to_25_points_ends_when_someone_has_25(server, client):
    st = play_game(client, server.base, agent="random", length="to_25", seed=8)
    assert st["phase"] == "match_over" and max(st["match"]["totals"]) >= 25
    totals = st["match"]["totals"]
    assert st["match"]["winners"] == [st["match"]["names"][m] for m in range(len(totals)) if totals[m] == min(totals)]


BROKEN = '''
from kc_sim.play.agent import PythonAgent


class ThreeShy(PythonAgent):
    """Plays its first legal action, but raises at a table of three (its warm-up is two players)."""

    name = "three-shy"

    def new_round(self, seat, players, rules, seed):
        super().new_round(seat, players, rules, seed)
        self.players = players

    def act(self, obs):
        if self.players == 3:
            raise RuntimeError("no table of three")
        return obs.legal[0]
'''


def test_an_agent_that_fails_mid_game_is_a_500_with_one_line(tmp_path, client):
    (tmp_path / "shy.py").write_text(BROKEN)
    s = Server(tmp_path / "data", agents=f"greedy,{tmp_path / 'shy.py'}:ThreeShy")
    try:
        names = [a["name"] for a in client.get(f"{s.base}api/config").json()["agents"]]
        r = gid = None
        for seed in range(40):          # a deal where the person stops and the shy agent must play
            r = client.post(f"{s.base}api/games", json={"opponents": [names[1], "greedy"], "seed": seed})
            if r.status_code == 500:    # it had to play before the person's first turn: one line too
                one_line_error(r, 500)
                continue
            gid = r.json()["game"]
            r = act(client, s, gid, "stop")
            if r.status_code != 200:
                break
        why = one_line_error(r, 500)
        assert "ThreeShy" in why and "raised RuntimeError" in why and "cannot go on" in why
        assert one_line_error(act(client, s, gid, "stop"), 500) == why        # and says so again, nothing played
        failed = client.get(f"{s.base}api/games/{gid}").json()
        assert failed["phase"] == "failed" and failed["failed"] == why and failed["legal"] == []
        assert client.get(f"{s.base}api/config").status_code == 200      # the server goes on
    finally:
        s.stop()
