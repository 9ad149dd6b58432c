"""Replay pages in a real browser: headless Chromium driven by Selenium loads pages from
file://, presses the arrow keys and clicks the buttons, and the cards on the table (the
page's data attributes) must match the record played again on a fresh Game
(:func:`tests.ui.test_replay_html.expected_tables`). Also: jumping to a turn, hiding the
other hands, the result at the end, a two-deck six-player round, an unfinished record
saved by ``kc-sim play``, several viewers in one HTML report, seat names that try to end
or comment out the page's script, and screenshots.

Without chromium and chromedriver these tests fail, saying how to install them (``make
test`` and CI install both); they are skipped only when ``KC_SIM_NO_BROWSER=1`` asks for it."""

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from kc_sim.cli.root import main
from kc_sim.play.recording.recorded import record_round
from kc_sim.records.format import write_records
from kc_sim.ui.terminal import play_session
from tests.ui.test_replay_html import expected_tables

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
DRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
#: the explicit opt-out: without it, a missing browser fails the tests instead of hiding them
NO_BROWSER = "KC_SIM_NO_BROWSER"
pytestmark = pytest.mark.skipif(os.environ.get(NO_BROWSER) == "1", reason=f"{NO_BROWSER}=1: browser tests skipped")
HOSTILE_NAMES = ["<!--<script>", "</script><script>document.title='pwned'</script>", "\u2028\u2029 & ]]>"]
FLAGS = ("--headless=new --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking "
         "--disable-component-update --disable-sync --window-size=1200,1000").split()


@pytest.fixture(scope="module")
def browser():
    if not (os.path.exists(CHROMIUM) and os.path.exists(DRIVER)):
        pytest.fail(f"the browser tests need chromium and chromedriver: apt-get install chromium chromium-driver "
                    f"(make test does it), or set {NO_BROWSER}=1 to skip them on purpose", pytrace=False)
    # selenium is a declared test dependency: missing is a failure, not a skip
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    opts = Options()
    opts.binary_location = CHROMIUM
    for f in FLAGS:
        opts.add_argument(f)
    profile = tempfile.mkdtemp(prefix="kc-chromium-")
    opts.add_argument(f"--user-data-dir={profile}")
    drv = webdriver.Chrome(service=Service(DRIVER), options=opts)
    yield drv
    drv.quit()
    shutil.rmtree(profile, ignore_errors=True)


def page_of(tmp_path: Path, recs, k: int = 0, name: str = "page.html") -> Path:
    path = write_records(tmp_path / f"{name}.jsonl", recs)
    out = tmp_path / name
    assert main(["replay", str(path), "--round", str(k), "--html", str(out)]) == 0
    return out


TABLE_JS = """
const v = arguments[0] ? document.getElementById(arguments[0]) : document.querySelector('div.kc-replay');
const svg = v.querySelector('[data-role=board] svg');
const piles = [...svg.querySelectorAll('g.pile')].map(g => g.dataset.cards);
const hands = [...svg.querySelectorAll('g.hand')].map(g => [g.dataset.cards, g.dataset.hidden, +g.dataset.count,
    [...g.querySelectorAll('[data-card]')].map(c => c.dataset.card).join(' ')]);
const drawn = [...svg.querySelectorAll('g.pile')].map(g => [...g.querySelectorAll('[data-card]')]
    .map(c => c.dataset.card).join(' '));
const last = svg.querySelector('[data-role=last]');
const hot = [...svg.querySelectorAll('g.card.last')].map(c => (c.closest('g.pile') ? c.closest('g.pile').dataset.pile
    : 'hand ' + c.closest('g.hand').dataset.seat) + ':' + c.dataset.card);
const result = v.querySelector('[data-role=result]');
return {step: +v.dataset.step, steps: +v.dataset.steps, turn: +v.dataset.turn,
        box: +v.querySelector('[data-act=turn]').value, piles, hands, drawn, hot,
        stock: +svg.querySelector('[data-role=stock]').dataset.count,
        last: last ? last.textContent : null, result: result.hidden ? null : result.textContent};
"""


def table(drv, uid=None) -> dict:
    return drv.execute_script(TABLE_JS, uid)


def same(seen: dict, want: dict, shown: bool = True) -> bool:
    hands_ok = all(h[0] == (want["hands"][s] if shown else h[0]) and h[2] == len(want["hands"][s].split())
                   for s, h in enumerate(seen["hands"]))
    return seen["piles"] == want["piles"] and seen["drawn"] == want["piles"] and seen["stock"] == want["stock"] \
        and hands_ok


def press(drv, key, times=1):
    from selenium.webdriver.common.action_chains import ActionChains

    chain = ActionChains(drv)
    for _ in range(times):
        chain.send_keys(key)
    chain.perform()


def test_arrow_keys_and_buttons_step_through_the_record(browser, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    rec = record_round(["greedy", "random"], 21, "classic")
    want, starts = expected_tables(rec)
    assert len(want) > 12
    browser.get(page_of(tmp_path, [rec]).as_uri())
    seen = table(browser)
    assert seen["step"] == 0 and seen["steps"] == len(want) and same(seen, want[0])
    press(browser, Keys.ARROW_RIGHT, 9)
    seen = table(browser)
    assert seen["step"] == 9 and same(seen, want[9]) and seen["last"].startswith("last: seat")
    assert seen["turn"] > 1 and seen["box"] == seen["turn"]         # the turn box follows the keys
    press(browser, Keys.ARROW_LEFT, 2)
    assert table(browser)["step"] == 7 and same(table(browser), want[7])
    browser.find_element(By.CSS_SELECTOR, "[data-act=next]").click()
    browser.find_element(By.CSS_SELECTOR, "[data-act=next]").click()
    assert table(browser)["step"] == 9 and same(table(browser), want[9])
    browser.find_element(By.CSS_SELECTOR, "[data-act=prev]").click()
    assert table(browser)["step"] == 8
    # jump to a turn: the table as that turn starts
    t = len(starts) // 2 + 1
    box = browser.find_element(By.CSS_SELECTOR, "[data-act=turn]")
    box.clear()
    box.send_keys(str(t))
    browser.find_element(By.CSS_SELECTOR, "[data-act=go]").click()
    seen = table(browser)
    assert seen["step"] == starts[t - 1] and same(seen, want[starts[t - 1]]) and seen["result"] is None
    # hide the other hands (key H): only the seat to play keeps its cards face up
    browser.find_element(By.TAG_NAME, "body").click()
    press(browser, "h")
    seen = table(browser)
    to_play = want[seen["step"]]["seat"]
    for s, (cards, hidden, count, drawn) in enumerate(seen["hands"]):
        assert hidden == ("false" if s == to_play else "true")
        assert (cards == drawn == want[seen["step"]]["hands"][s]) if s == to_play else (cards == drawn == "")
        assert count == len(want[seen["step"]]["hands"][s].split())
    # the card the previous seat drew is not named while its hand is hidden
    drew = rec["turns"][t - 2]["drew"]
    assert drew is not None and seen["last"].endswith("and draws a card")
    press(browser, "h")
    assert all(h[1] == "false" for h in table(browser)["hands"])
    label = ("10" if drew[0] == "T" else drew[0]) + {"C": "\u2663", "D": "\u2666", "H": "\u2665", "S": "\u2660"}[drew[1]]
    assert table(browser)["last"].endswith(f"draws {label}")
    # the end: the last decision and the result
    press(browser, Keys.END)
    seen = table(browser)
    assert seen["step"] == len(want) - 1 and same(seen, want[-1])
    assert "Result:" in seen["result"] and "(as recorded)" in seen["result"]
    press(browser, Keys.ARROW_RIGHT)
    assert table(browser)["step"] == len(want) - 1       # no step past the end
    press(browser, Keys.HOME)
    assert table(browser)["step"] == 0 and table(browser)["box"] == 1
    shot = tmp_path / "replay.png"
    assert browser.save_screenshot(str(shot)) and shot.stat().st_size > 10_000


@pytest.mark.parametrize("rules,agents", [
    ("classic", ["greedy", "random", "merger", "king-first"]),
    ("classic,decks=2", ["greedy", "random", "greedy", "random", "merger", "greedy"]),
    ("draw_first,scoring=face", ["greedy", "random", "merger"]),
])
def test_every_decision_matches_the_record(browser, tmp_path, rules, agents):
    from selenium.webdriver.common.keys import Keys

    rec = record_round(agents, 300 + len(agents), rules)
    want, _ = expected_tables(rec)
    # the decisions in order: each action's text, "stop" where a turn was closed
    decisions = []
    for turn in rec["turns"]:
        decisions += turn["actions"] + ["stop"]
    browser.get(page_of(tmp_path, [rec]).as_uri())
    for i in range(len(want)):
        seen = table(browser)
        assert seen["step"] == i and same(seen, want[i]), f"decision {i}"
        if i:   # the last action is highlighted where it went, and only there
            a = decisions[i - 1]
            src, dst = a.split(">") if ">" in a else (None, None)
            if src is not None and len(src) == 2 and src[0] in "A23456789TJQK" and src[1] in "CDHS":
                assert seen["hot"] == [f"{dst}:{src}"], (i, a)
            elif src is not None:
                assert seen["hot"] and all(h.startswith(f"{dst}:") for h in seen["hot"]), (i, a)
            assert a in seen["last"] or a == "stop"
        press(browser, Keys.ARROW_RIGHT)
    assert "(as recorded)" in table(browser)["result"]
    browser.save_screenshot(str(tmp_path / "end.png"))


def test_an_unfinished_round_saved_by_kc_sim_play_opens(browser, tmp_path):
    from selenium.webdriver.common.keys import Keys

    answers = iter(["1", "1", "1", "quit"])
    out = tmp_path / "play.jsonl"
    play_session(["human", "greedy", "random"], seed=3, out=out, input_fn=lambda prompt: next(answers),
                 echo=lambda s: None)
    import json

    rec = json.loads(out.read_text().splitlines()[-1])
    assert rec["result"]["end"] == "unfinished"
    want, _ = expected_tables(rec)
    html = tmp_path / "play.html"
    assert main(["replay", str(out), "--html", str(html)]) == 0
    browser.get(html.as_uri())
    press(browser, Keys.END)
    seen = table(browser)
    assert seen["step"] == len(want) - 1 and same(seen, want[-1]) and "unfinished" in seen["result"]


def test_viewers_in_one_page_step_on_their_own(browser, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    from kc_sim.play.seeing import replay_doc
    from kc_sim.picture.replay_page import page_assets, replay_block

    recs = [record_round(["greedy", "random"], s, "classic") for s in (40, 41)]
    blocks = "".join(replay_block(replay_doc(r), f"v{i}", heading=f"round {i}") for i, r in enumerate(recs))
    page = tmp_path / "two.html"
    page.write_text(f"<!DOCTYPE html><html><head><meta charset='utf-8'></head><body>{blocks}{page_assets()}"
                    "</body></html>", encoding="utf-8")
    browser.get(page.as_uri())
    browser.find_element(By.CSS_SELECTOR, "#v1 [data-act=next]").click()
    press(browser, Keys.ARROW_RIGHT, 2)
    want1, _ = expected_tables(recs[1])
    assert table(browser, "v1")["step"] == 3 and same(table(browser, "v1"), want1[3])
    assert table(browser, "v0")["step"] == 0


def test_a_report_page_holds_working_replays(browser, tmp_path):
    from selenium.webdriver.common.by import By

    run = tmp_path / "run"
    assert main(["tournament", "--agents", "greedy,random", "--players", "2", "--rounds", "200", "--jobs", "1",
                 "--out", str(run)]) == 0
    assert main(["report", str(run)]) == 0
    browser.get((run / "report.html").as_uri())
    viewers = browser.find_elements(By.CSS_SELECTOR, "div.kc-replay")
    assert len(viewers) == 2
    uid = viewers[1].get_attribute("id")
    browser.find_element(By.CSS_SELECTOR, f"#{uid} [data-act=last]").click()
    seen = table(browser, uid)
    assert seen["step"] == seen["steps"] - 1 and "Result:" in seen["result"]
    browser.execute_script("arguments[0].scrollIntoView()", viewers[1])
    browser.save_screenshot(str(tmp_path / "report.png"))


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_a_seat_name_cannot_end_or_comment_out_the_script(browser, tmp_path, name):
    """``<!--<script>`` (and a closing tag, line separators) as a seat name: the viewer starts,
    steps, and shows the name as text."""
    from selenium.webdriver.common.keys import Keys

    rec = record_round(["greedy", "random"], 44, "classic")
    rec["players"] = [name, "random"]
    want, _ = expected_tables(rec)
    browser.get(page_of(tmp_path, [rec]).as_uri())
    assert browser.title.startswith("kc-sim replay")
    seen = table(browser)
    assert seen["steps"] == len(want) and same(seen, want[0])
    press(browser, Keys.END)
    assert table(browser)["step"] == len(want) - 1
    seat = browser.execute_script("return document.querySelector('g.hand[data-seat=\"0\"] text').textContent")
    assert seat.startswith(f"seat 0 \u00b7 {name}".replace("\u2028", "?").replace("\u2029", "?"))


def test_a_report_with_a_hostile_agent_name_keeps_every_section(browser, tmp_path, monkeypatch):
    """A run whose agent name holds ``<!--<script>`` (a model under such a folder, named by a
    relative path so the name is shown whole): both sample replays start and the sections
    after them are still on the page."""
    from selenium.webdriver.common.by import By

    from tests.faults.test_model_files import small_net

    monkeypatch.chdir(tmp_path)
    (tmp_path / "<!--<script>").mkdir()
    small_net().write_into(tmp_path / "<!--<script>" / "m.zip")
    run = tmp_path / "run"
    assert main(["tournament", "--agents", "sb3:<!--<script>/m.zip,random", "--players", "2", "--rounds", "60",
                 "--jobs", "1", "--quiet", "--out", str(run)]) == 0
    assert main(["report", str(run)]) == 0
    browser.get((run / "report.html").as_uri())
    headings = [h.text for h in browser.find_elements(By.TAG_NAME, "h2")]
    assert headings[-2:] == ["Sample rounds", "Method"], headings
    viewers = browser.find_elements(By.CSS_SELECTOR, "div.kc-replay")
    assert len(viewers) == 2
    for v in viewers:
        uid = v.get_attribute("id")
        browser.find_element(By.CSS_SELECTOR, f"#{uid} [data-act=last]").click()
        seen = table(browser, uid)
        assert seen["steps"] > 1 and seen["step"] == seen["steps"] - 1 and "Result:" in seen["result"]
    assert "sb3:<!--<script>/m.zip" in browser.find_element(By.CSS_SELECTOR, "div.kc-replay svg").text
