"""The page of ``kc-sim serve`` in headless Chromium (Selenium, as tests/ui/test_browser.py):
a whole round clicked through against greedy (cards of the hand and piles of the picture),
an illegal move explained in words, a reload mid-round that keeps the game, two tabs with
two games. Every wait is for a condition of the page, with generous bounds; no test reads
a clock."""

import json
import os

import pytest

from kc_sim.records.check import check_file
from tests.serve.conftest import Server
from tests.ui.test_browser import NO_BROWSER, browser  # noqa: F401 - that module's Chromium, reused

pytestmark = pytest.mark.skipif(os.environ.get(NO_BROWSER) == "1", reason=f"{NO_BROWSER}=1: browser tests skipped")

WAIT = 120


@pytest.fixture(scope="module")
def page_server(tmp_path_factory):
    s = Server(tmp_path_factory.mktemp("serve-page") / "data", agents="greedy,merger",
               extra=["--analysis-budget", "32"])          # a quick analysis after each round
    yield s
    s.stop()


def wait_for(drv, script, timeout=WAIT):
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(drv, timeout, poll_frequency=0.1).until(lambda d: d.execute_script(script))


def settled(drv):
    """Wait until the page is not busy and shows a phase of the game; return it."""
    return wait_for(drv, "const a = document.getElementById('app');"
                         "return a.dataset.busy === 'false' && ['your_turn', 'round_over', 'match_over']"
                         ".includes(a.dataset.phase) ? a.dataset.phase : false;")


def start(drv, server, opponents=("greedy",), length="1", seed=7, name=""):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    drv.get(server.base)
    wait_for(drv, "return document.getElementById('opp1').options.length > 0")
    for i, sel in enumerate(("opp1", "opp2", "opp3")):
        Select(drv.find_element(By.ID, sel)).select_by_value(opponents[i] if i < len(opponents) else "")
    Select(drv.find_element(By.ID, "length")).select_by_value(length)
    drv.execute_script("document.getElementById('pace').value = '0'")     # the agents' turns at once
    drv.find_element(By.ID, "seed").send_keys(str(seed))
    if name:
        drv.find_element(By.ID, "name").send_keys(name)
    drv.find_element(By.ID, "start").click()
    wait_for(drv, "return location.hash.startsWith('#game=')")
    return settled(drv)


def seen(drv) -> dict:
    return drv.execute_script("""
      const svg = document.querySelector('#board svg'), mine = svg.querySelector('g.hand[data-mine=true]');
      return {hash: location.hash, phase: document.getElementById('app').dataset.phase,
              hand: mine ? mine.dataset.cards : null, msg: document.getElementById('msg').textContent,
              legal: [...document.querySelectorAll('#legal button')].map(b => b.dataset.action),
              piles: [...svg.querySelectorAll('g.pile')].map(g => g.dataset.pile + ':' + g.dataset.cards),
              hidden: [...svg.querySelectorAll('g.hand[data-hidden=true]')].map(g => g.dataset.cards)};""")


def click_action(drv, action):
    """Play ``action`` the way a person does: a card of the hand (or a side pile), then a pile."""
    from selenium.webdriver.common.by import By

    if action == "stop":
        drv.find_element(By.ID, "stop").click()
        return
    src, dst = action.split(">")
    board = drv.find_element(By.ID, "board")
    if src in ("N", "E", "S", "W"):
        board.find_elements(By.CSS_SELECTOR, f'g.pile[data-pile="{src}"] g.card')[-1].click()
    else:
        board.find_element(By.CSS_SELECTOR, f'g.hand[data-mine=true] [data-card="{src}"]').click()
    target = board.find_elements(By.CSS_SELECTOR, f'g.pile[data-pile="{dst}"] g.card') or \
        board.find_elements(By.CSS_SELECTOR, f'g.pile[data-pile="{dst}"] rect.empty')
    target[-1].click()                                  # the top card (the one not covered), or the empty place


def test_a_whole_round_clicked_through_against_greedy(browser, page_server):  # noqa: F811
    from selenium.webdriver.common.by import By

    before = page_server.records.read_text().count("\n") if page_server.records.exists() else 0
    phase = start(browser, page_server, seed=7, name="Tester")
    turn_moves = 0
    for _ in range(600):
        if phase != "your_turn":
            break
        st = seen(browser)
        assert all(h == "" for h in st["hidden"])       # the agents' hands are face down
        moves = [a for a in st["legal"] if a != "stop"]
        action = moves[0] if moves and turn_moves < 25 else "stop"
        turn_moves = 0 if action == "stop" else turn_moves + 1
        click_action(browser, action)
        wait_for(browser, "return document.getElementById('msg').textContent.length > 0")
        phase = settled(browser)
        assert "not legal" not in seen(browser)["msg"]
    assert phase == "match_over"
    result = browser.find_element(By.ID, "result")
    assert result.is_displayed() and "over" in browser.find_element(By.ID, "result-title").text
    rows = browser.find_elements(By.CSS_SELECTOR, "#result-table tbody tr")
    assert len(rows) == 2 and any("Tester" in r.text for r in rows)
    wait_for(browser, "return document.getElementById('analysis').textContent.includes('error rate')", timeout=300)
    assert "evaluator" in browser.find_element(By.ID, "analysis").text
    assert "saved" in browser.find_element(By.ID, "saved").text
    lines = page_server.records.read_text().splitlines()
    assert len(lines) == before + 1 and "Tester" in json.loads(lines[-1])["players"]
    assert not check_file(page_server.records)[1]
    the_round_reviewed(browser, page_server)


REVIEW_JS = """
const v = document.querySelector('#review div.kc-replay');
if (!v) return null;
return {step: +v.dataset.step, judged: v.dataset.judged,
        points: [...v.querySelectorAll('svg.kc-graph g.kc-pt')].map(g => [g.dataset.kind, +g.dataset.step]),
        best: (v.querySelector('[data-role=board] [data-role=best]') || {}).textContent || null,
        marked: v.querySelectorAll('[data-role=board] .kc-best, [data-role=board] .kc-best-to').length,
        costly: [...document.querySelectorAll('#analysis button.costly')].map(b => [+b.dataset.step, b.textContent])};
"""


def the_round_reviewed(drv, server):
    """After the round: the graph of the player's win probability (a point per judged
    decision, as the API counts them), the costliest decision on the board with its better
    action, a click on another costly decision moving the board; nothing of the viewer's script
    (/static/replay.js) is blocked by the page's CSP."""
    import httpx
    from selenium.webdriver.common.by import By

    gid = drv.execute_script("return location.hash.slice(6)")
    a = httpx.get(f"{server.base}api/games/{gid}/rounds/0/analysis", timeout=120).json()
    seen = drv.execute_script(REVIEW_JS)
    assert seen is not None and a["costliest"], "a round of first-legal moves has costly decisions"
    want = sorted(p["step"] for p in a["graph"]["points"] if p["kind"] == "decision")
    assert sorted(s for kind, s in seen["points"] if kind == "decision") == want and len(want) == a["decisions"] - a["forced"]
    first = a["costliest"][0]
    assert [c[0] for c in seen["costly"]] == [d["step"] for d in a["costliest"]]
    assert seen["step"] == first["step"] and seen["judged"] == "true" and seen["marked"] >= 1
    assert seen["best"].startswith(f"best: {first['better']} (")
    if len(a["costliest"]) > 1:
        drv.find_elements(By.CSS_SELECTOR, "#analysis button.costly")[1].click()
        assert drv.execute_script(REVIEW_JS)["step"] == a["costliest"][1]["step"]
    # nothing refused or failed: the board SVG's own <style> element is allowed by its hash
    logged = [e for e in drv.get_log("browser") if e.get("level") == "SEVERE"]
    assert not logged, logged


def test_an_illegal_move_is_explained(browser, page_server):  # noqa: F811
    start(browser, page_server, seed=8)
    st = seen(browser)
    piles = dict(p.split(":", 1) for p in st["piles"])
    card, pile = next((c, p) for c in st["hand"].split() for p in piles
                      if piles[p] and f"{c}>{p}" not in st["legal"])
    click_action(browser, f"{card}>{pile}")
    wait_for(browser, "return document.getElementById('msg').textContent.includes('not legal')")
    msg = seen(browser)["msg"]
    assert msg.startswith(f"{card}>{pile} is not legal now: ") and len(msg) > 40
    assert seen(browser)["hand"] == st["hand"]      # nothing was played


def test_typed_moves_and_keys(browser, page_server):  # noqa: F811
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    start(browser, page_server, seed=12)
    box = browser.find_element(By.ID, "move")
    box.send_keys("QQ>Z", Keys.ENTER)
    wait_for(browser, "return document.getElementById('msg').textContent.includes('bad action')")
    turn = browser.execute_script("return document.querySelector('#board svg').dataset.turn")
    browser.find_element(By.TAG_NAME, "body").send_keys("s")       # S stops the turn
    wait_for(browser, f"return document.querySelector('#board svg').dataset.turn !== '{turn}'"
                      " || document.getElementById('app').dataset.phase !== 'your_turn'")
    assert settled(browser) in ("your_turn", "match_over")
    log = browser.find_element(By.ID, "log").text
    assert "you play stop" in log


def test_a_reload_mid_round_keeps_the_game(browser, page_server):  # noqa: F811
    start(browser, page_server, seed=9)
    st = seen(browser)
    moves = [a for a in st["legal"] if a != "stop"]
    click_action(browser, moves[0] if moves else "stop")
    settled(browser)
    before = seen(browser)
    browser.refresh()
    wait_for(browser, "return document.querySelector('#board svg') !== null")
    settled(browser)
    after = seen(browser)
    assert after["hash"] == before["hash"] and after["hand"] == before["hand"] and after["piles"] == before["piles"]
    assert after["legal"] == before["legal"]


def test_two_tabs_play_two_games(browser, page_server):  # noqa: F811
    start(browser, page_server, seed=21)
    first_tab, first = browser.current_window_handle, seen(browser)
    browser.switch_to.new_window("tab")
    try:
        start(browser, page_server, opponents=("merger", "greedy"), seed=22)
        second = seen(browser)
        assert second["hash"] != first["hash"] and len(second["hidden"]) == 2
        browser.switch_to.window(first_tab)
        browser.refresh()
        wait_for(browser, "return document.querySelector('#board svg') !== null")
        settled(browser)
        again = seen(browser)
        assert again["hash"] == first["hash"] and again["hand"] == first["hand"] and len(again["hidden"]) == 1
    finally:
        for h in browser.window_handles:
            if h != first_tab:
                browser.switch_to.window(h)
                browser.close()
        browser.switch_to.window(first_tab)


def test_a_pile_moved_by_clicks_and_a_card_dragged(browser, page_server):  # noqa: F811
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    start(browser, page_server, seed=0)         # seed 0 against greedy: E>N and KC>NE are legal at once
    st = seen(browser)
    assert "E>N" in st["legal"] and "KC>NE" in st["legal"]
    piles = dict(p.split(":", 1) for p in st["piles"])
    click_action(browser, "E>N")                # the side pile E, then N
    wait_for(browser, "return document.getElementById('msg').textContent.includes('You played E>N')")
    settled(browser)
    after = dict(p.split(":", 1) for p in seen(browser)["piles"])
    assert after["E"] == "" and after["N"] == f"{piles['N']} {piles['E']}"
    board = browser.find_element(By.ID, "board")
    card = board.find_element(By.CSS_SELECTOR, 'g.hand[data-mine=true] [data-card="KC"]')
    corner = board.find_element(By.CSS_SELECTOR, 'g.pile[data-pile="NE"] rect.empty')
    ActionChains(browser).drag_and_drop(card, corner).perform()
    wait_for(browser, "return document.getElementById('msg').textContent.includes('You played KC>NE')")
    settled(browser)
    now = seen(browser)
    assert dict(p.split(":", 1) for p in now["piles"])["NE"].startswith("KC") and "KC" not in now["hand"].split()


def test_the_agents_turns_are_shown_step_by_step(browser, page_server):  # noqa: F811
    from selenium.webdriver.common.by import By

    start(browser, page_server, opponents=("greedy", "merger"), seed=31)
    browser.execute_script("document.getElementById('pace').value = '700'")
    browser.find_element(By.ID, "stop").click()
    # while the agents' steps are shown the page is busy and names each one above the table
    shown = wait_for(browser, "const a = document.getElementById('app'), l = document.querySelector('#board [data-role=last]');"
                              "return a.dataset.phase === 'agents' && l ? l.textContent : false;")
    assert shown.startswith("last: ") and ("greedy" in shown or "pile-merger" in shown)
    assert settled(browser) in ("your_turn", "match_over")
    lines = browser.find_element(By.ID, "log").text.splitlines()
    assert any(line.startswith("greedy ") for line in lines) and any(line.startswith("pile-merger ") for line in lines)
