"""The evaluation graph and the best alternative on the replay page: ``kc-sim analyse FILE -o
OUT.html`` (a viewer per judged round) and ``kc-sim replay FILE --html OUT --analyse``.

Without a browser: the graph's data puts every judged decision and draw at the replay step
where it happened (the seat to act, the action played next, the card drawn). In headless
Chromium (the module of tests/ui/test_browser.py): one point per judged decision, a click
on a point moves the board to its step, the best action is highlighted on the board with
its text, stepping moves the graph's cursor, hostile seat names stay text. Small budgets:
the figures themselves are tests/judge's concern."""

import contextlib
import io
import json
import re

import pytest

from kc_sim.cli.root import main
from kc_sim.game.actions import parse_action
from kc_sim.play.recording.recorded import record_round
from kc_sim.play.seeing import replay_doc
from kc_sim.records.format import write_records
from tests.ui.test_browser import HOSTILE_NAMES, browser, same, table  # noqa: F401 - the module's Chromium
from tests.ui.test_replay_html import expected_tables

BUDGET = "16"


def analysed(path, *args) -> dict:
    """``kc-sim analyse --json`` of ``path`` (small budget), its report."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["analyse", str(path), "--budget", BUDGET, "--json", *map(str, args)]) == 0
    return json.loads(out.getvalue())


@pytest.fixture(scope="module")
def judged(tmp_path_factory):
    """Two rounds (greedy against random), judged for every seat, and the page of both."""
    d = tmp_path_factory.mktemp("judged")
    recs = [record_round(["greedy", "random"], seed, "classic") for seed in (31, 32)]
    path = write_records(d / "r.jsonl", recs)
    page = d / "analysis.html"
    return recs, analysed(path, "-o", page), page


def test_every_point_is_at_the_step_where_it_happened(judged):
    from kc_sim.picture.evaluation import evaluation_data

    recs, report, _ = judged
    for rec, rnd in zip(recs, report["rounds"]):
        doc, ev = replay_doc(rec), evaluation_data(report, rnd)
        decisions = [p for p in ev["points"] if p["kind"] == "decision"]
        assert len(decisions) == sum(not d["forced"] for d in rnd["decisions"]) > 0
        for p in decisions:
            assert doc["steps"][p["step"]]["seat"] == p["seat"]
            after = doc["steps"][p["step"] + 1]["last"]["text"]
            assert ("stops" in after) if p["played"] == "stop" else parse_action(p["played"]) is not None
            assert p["label"] in ("", "inaccuracy", "mistake", "blunder") and 0 <= p["win"] <= 100
        draws = [p for p in ev["points"] if p["kind"] == "draw"]
        assert len(draws) == len(rnd["luck"]["draws"]) > 0
        for p in draws:
            assert "draws a card" in doc["steps"][p["step"]]["last"]["text"]
            assert p["card"] in doc["steps"][p["step"]]["hands"][p["seat"]]


GRAPH_JS = """
const v = document.getElementById(arguments[0]);
const pts = [...v.querySelectorAll('[data-role=graph] g.kc-pt')].map(g => [g.dataset.kind, +g.dataset.step,
    +g.dataset.seat, g.dataset.label]);
const c = v.querySelector('[data-role=cursor]');
return {pts, lines: v.querySelectorAll('[data-role=graph] polyline.kc-line').length, cursor: +c.getAttribute('x1'),
        judged: v.dataset.judged, judge: v.querySelector('[data-role=judge]').textContent,
        best: (v.querySelector('[data-role=best]') || {}).textContent || null,
        bestCards: [...v.querySelectorAll('[data-role=board] g.card.kc-best')].map(g => g.dataset.card),
        bestTo: [...v.querySelectorAll('[data-role=board] g.pile.kc-best-to')].map(g => g.dataset.pile),
        arrows: v.querySelectorAll('[data-role=board] g.kc-arrow.kc-best').length};
"""


def graph(drv, uid: str) -> dict:
    return drv.execute_script(GRAPH_JS, uid)


def test_the_page_has_a_graph_with_one_point_per_judged_decision(browser, judged):  # noqa: F811
    from selenium.webdriver.common.by import By

    _, report, page = judged
    text = page.read_text(encoding="utf-8")                 # self-contained: nothing fetched
    assert not re.search(r"<(script|link|img|iframe)[^>]+(src|href)=", text)
    assert "http://" not in text.replace('xmlns="http://www.w3.org/2000/svg"', "") and "https://" not in text
    browser.get(page.as_uri())
    viewers = browser.find_elements(By.CSS_SELECTOR, "div.kc-replay")
    assert [v.get_attribute("id") for v in viewers] == ["round-0", "round-1"]
    assert len(browser.find_elements(By.CSS_SELECTOR, "svg.kc-graph")) == 2     # one SVG graph a round
    for i, rnd in enumerate(report["rounds"]):
        g = graph(browser, f"round-{i}")
        want = sorted((d["decision"], d["seat"], d["label"]) for d in rnd["decisions"] if not d["forced"])
        assert sorted((s, seat, lab) for kind, s, seat, lab in g["pts"] if kind == "decision") == want
        assert sum(kind == "draw" for kind, *_ in g["pts"]) == len(rnd["luck"]["draws"])
        assert sum(kind == "deal" for kind, *_ in g["pts"]) == 2 and g["lines"] == 2
    assert browser.get_log("browser") == []


def test_a_click_on_a_point_moves_the_board_and_shows_the_best_action(browser, judged):  # noqa: F811
    from selenium.webdriver.common.by import By

    recs, report, page = judged
    browser.get(page.as_uri())
    want, _ = expected_tables(recs[0])
    rnd = report["rounds"][0]
    # a decision whose best is a card placed, not the action played: its marks are all drawn
    dec = next(d for d in rnd["decisions"] if not d["forced"] and d["best"] != d["chosen"] and d["loss"] > 0
               and re.match(r"^[2-9TJQKA][CDHS]>", d["best"]))
    start = graph(browser, "round-0")["cursor"]
    point = browser.find_element(By.CSS_SELECTOR, f"#round-0 g.kc-pt[data-kind=decision][data-step='{dec['decision']}']")
    point.click()
    seen = table(browser, "round-0")
    assert seen["step"] == dec["decision"] and same(seen, want[dec["decision"]])
    g = graph(browser, "round-0")
    assert g["judged"] == "true" and g["cursor"] > start
    assert g["best"] == f"best: {dec['best']} (+{dec['loss']:.1f} points)"
    card, target = dec["best"].split(">")
    assert g["bestCards"] == [card] and g["bestTo"] == [target] and g["arrows"] == 1
    assert f"played {dec['chosen']}" in g["judge"] and f"best {dec['best']}" in g["judge"]


def test_stepping_moves_the_cursor_and_the_next_labelled_button_jumps(browser, judged):  # noqa: F811
    from selenium.webdriver.common.by import By

    _, report, page = judged
    browser.get(page.as_uri())
    before = graph(browser, "round-1")["cursor"]
    browser.find_element(By.CSS_SELECTOR, "#round-1 [data-act=next]").click()
    assert graph(browser, "round-1")["cursor"] > before
    labelled = sorted(d["decision"] for d in report["rounds"][1]["decisions"] if d["label"])
    browser.find_element(By.CSS_SELECTOR, "#round-1 [data-act=nextlab]").click()
    step = table(browser, "round-1")["step"]
    assert step == (labelled[0] if labelled else 1)


@pytest.mark.parametrize("name", HOSTILE_NAMES[:2])
def test_replay_analyse_writes_the_graph_and_keeps_a_hostile_name_as_text(browser, tmp_path, name, capsys):  # noqa: F811
    from selenium.webdriver.common.by import By

    rec = record_round(["greedy", "random"], 33, "classic")
    rec["players"] = [name, "random"]
    path = write_records(tmp_path / "h.jsonl", [rec])
    out = tmp_path / "h.html"
    assert main(["replay", str(path), "--html", str(out), "--analyse", "--budget", BUDGET]) == 0
    assert "replay page written to" in capsys.readouterr().out
    browser.get(out.as_uri())
    assert browser.title.startswith("kc-sim replay")
    pts = graph(browser, "replay")["pts"]
    assert {seat for kind, _, seat, _ in pts if kind == "decision"} == {0, 1}
    browser.find_element(By.CSS_SELECTOR, "#replay g.kc-pt[data-kind=decision]").click()
    assert "seat 0" in graph(browser, "replay")["judge"] or "seat 1" in graph(browser, "replay")["judge"]
    legend = browser.find_element(By.CSS_SELECTOR, "#replay [data-role=legend]").text
    assert name.replace("\u2028", "?").replace("\u2029", "?")[:10] in legend


def test_analyse_out_and_replay_analyse_refuse_bad_input(tmp_path, capsys):
    rec = record_round(["greedy", "random"], 34, "classic")
    path = write_records(tmp_path / "r.jsonl", [rec])
    assert main(["analyse", str(path), "-o", str(tmp_path)]) == 2
    assert "bad --out" in capsys.readouterr().err
    assert main(["replay", str(path), "--analyse"]) == 2
    assert "--html" in capsys.readouterr().err
    assert main(["replay", str(path), "--html", str(tmp_path / "x.html"), "--analyse", "--budget", "0"]) == 2
    assert "bad --budget" in capsys.readouterr().err and not (tmp_path / "x.html").exists()
