"""The research sections of ``kc-sim report`` (issue 12): ratings, paired differences and
variance reduction, power, stopping and the schedule note, checked against numbers
computed here from the run's own files (summary.parquet, the rounds read with pandas)."""

from __future__ import annotations

import math
import re
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import t as student_t

from kc_sim.analysis import report, research
from kc_sim.analysis.leaderboard import Comparisons, leaderboard, rate_comparisons
from kc_sim.analysis.scan import scan_run
from kc_sim.analysis.text import fmt_pct
from kc_sim.runs import read_rounds
from kc_sim.tournament.run import run_tournament

AGENTS = ["greedy", "merger", "random"]
Z95 = 1.959963984540054
Z80 = 0.8416212335729143          # one-sided z of 80% power


def _run(out: Path, agents=AGENTS, **kw) -> Path:
    """A small run (3 agents at 3 seats, 3,000 rounds unless ``kw`` says otherwise)."""
    args = {"players": 3, "rounds": 3000, "seed": 11, "jobs": 1, "backend": "sequential", "out": out, "quiet": True}
    args.update(kw)
    run_tournament(list(agents), **args)
    return out


@pytest.fixture(scope="module")
def run3(tmp_path_factory) -> Path:
    return _run(tmp_path_factory.mktemp("research") / "run3")


@pytest.fixture(scope="module")
def html3(run3, tmp_path_factory) -> str:
    out = report.write_report(run3, tmp_path_factory.mktemp("research") / "r.html")
    return out.read_text(encoding="utf-8")


def _html(run: Path) -> str:
    """The report's HTML without figures (build_html straight from the scan: fast)."""
    data = scan_run(run)
    return report.build_html(data, {}, run, research.research(data))


class _Tables(HTMLParser):
    """Every <table> of a page as a list of rows of cell texts, keyed by the last heading
    (h2 or h3) before it."""

    def __init__(self):
        super().__init__()
        self.tables: dict[str, list[list[str]]] = {}
        self.heading, self._in_head, self._cell, self._rows = "", False, None, None

    def handle_starttag(self, tag, attrs):
        if tag in ("h2", "h3"):
            self._in_head, self.heading = True, ""
        elif tag == "table":
            self._rows = []
        elif tag == "tr" and self._rows is not None:
            self._rows.append([])
        elif tag in ("td", "th") and self._rows is not None:
            self._cell = ""

    def handle_endtag(self, tag):
        if tag in ("h2", "h3"):
            self._in_head = False
        elif tag in ("td", "th") and self._cell is not None:
            self._rows[-1].append(self._cell)
            self._cell = None
        elif tag == "table":
            self.tables[self.heading] = self._rows
            self._rows = None

    def handle_data(self, data):
        if self._in_head:
            self.heading += data
        if self._cell is not None:
            self._cell += data


def tables(html: str) -> dict[str, list[dict]]:
    """Heading -> table rows as dicts (header -> cell; repeated headers get a ``#2``)."""
    p = _Tables()
    p.feed(html)
    out = {}
    for head, rows in p.tables.items():
        names, seen = [], {}
        for h in rows[0]:
            seen[h] = seen.get(h, 0) + 1
            names.append(h if seen[h] == 1 else f"{h}#{seen[h]}")
        out[head] = [dict(zip(names, r)) for r in rows[1:]]
    return out


def _value(cell: str) -> float:
    """The leading number of a cell such as ``50.06% [49.59, 50.52]`` or ``10,572``."""
    return float(re.match(r"[-+]?[\d,.]+", cell.strip()).group(0).replace(",", ""))


def _bounds(cell: str) -> tuple[float, float]:
    lo, hi = re.search(r"\[([-+\d.]+), ([-+\d.]+)\]", cell).groups()
    return float(lo), float(hi)


def per_deal_scores(run: Path, a: str, b: str) -> pd.Series:
    """Per deal, the share of its rounds in which a has a lower penalty than b (ties half),
    straight from the rounds (pandas), independent of the library's streaming code."""
    df = read_rounds(run)
    k = sum(1 for c in df.columns if c.startswith("penalty_"))
    agent = np.stack([df[f"agent_{s}"].astype(str).to_numpy() for s in range(k)], axis=1)
    pen = np.stack([df[f"penalty_{s}"].to_numpy(dtype=float) for s in range(k)], axis=1)
    rows = np.arange(len(df))
    sa, sb = (agent == a).argmax(axis=1), (agent == b).argmax(axis=1)
    both = (agent == a).any(axis=1) & (agent == b).any(axis=1)
    pa, pb = pen[rows, sa], pen[rows, sb]
    score = (pa < pb) + 0.5 * (pa == pb)
    return pd.Series(score[both]).groupby(df["group"].to_numpy()[both]).mean()


# --- the sections of a 3-agent run ----------------------------------------------------------

def test_research_sections_appear_in_order(html3):
    heads = re.findall(r"<h2>(.*?)</h2>", html3)
    want = ["Head-to-head", "Ratings", "Paired differences and variance reduction", "Power", "Figures", "Method"]
    assert [h for h in heads if h in want] == want
    assert "Stopping" not in heads                       # not an --until run
    assert "3! = 6 seatings" in html3 and "WARNING" not in html3
    assert html3.count("data:image/png;base64,") >= 5   # still self-contained with its figures


def test_pairwise_matrix_matches_the_summary_and_the_leaderboard(run3, html3):
    summary = pd.read_parquet(run3 / "summary.parquet").dropna(subset=["opponent"])
    matrix = {r["agent"]: r for r in tables(html3)["Pairwise: the row agent finishes ahead of the column agent"]}
    board = leaderboard([run3])                           # the same default bootstrap and seed as the report
    pairs = board.attrs["metagame"].pairs.set_index(["agent", "opponent"])
    assert set(matrix) == {"greedy", "pile-merger", "random"}
    checked = 0
    for r in summary.itertuples():
        share = (r.beats + r.ties / 2) / r.rounds          # finishes ahead, ties half
        cell = matrix[r.agent][f"vs {r.opponent}"]
        p = pairs.loc[(r.agent, r.opponent)]
        assert cell.rstrip(" *") == fmt_pct(share, p.share_lo, p.share_hi, digits=2)
        assert cell.endswith(" *") == (p.share_lo > 0.5 or p.share_hi < 0.5)
        checked += 1
    assert checked == 6
    for a in matrix:
        assert matrix[a][f"vs {a}"] == "-"


def test_ratings_table_fit_line_and_cycles(run3, html3):
    board = leaderboard([run3])
    rows = tables(html3)["Bradley-Terry and Nash averaging"]
    assert [r["agent"] for r in rows] == board["agent"].tolist()
    for r, b in zip(rows, board.itertuples()):
        assert _value(r["BT rating (Elo scale) [95% CI]"]) == pytest.approx(b.rating, abs=0.051)
        assert _value(r["Nash weight"]) == pytest.approx(100 * b.nash_weight, abs=0.051)
        assert _value(r["Nash rating, pp [95% CI]"]) == pytest.approx(100 * b.nash_rating, abs=0.051)
    assert sum(_value(r["Nash weight"]) for r in rows) == pytest.approx(100, abs=0.2)
    fit = re.search(r'<p id="bt-fit">(.*?)</p>', html3).group(1)
    assert fit.startswith(("BT fits:", "BT does not fit:")) and "df, p = " in fit
    cycles = board.attrs["metagame"].cycles
    block = html3.split("<h3>Intransitive cycles</h3>", 1)[1].split("<h3>", 1)[0]
    if len(cycles) == 0:
        assert "none: no agents beat each other in a ring" in block
    else:
        assert all(c.replace(">", "&gt;") in block for c in cycles["cycle"])


def test_paired_differences_match_the_rounds(run3, html3):
    rows = tables(html3)["Paired differences and variance reduction"]
    assert [(r["agent A"], r["agent B"]) for r in rows] == [("greedy", "pile-merger"), ("greedy", "random"),
                                                             ("pile-merger", "random")]
    summary = pd.read_parquet(run3 / "summary.parquet").dropna(subset=["opponent"]).set_index(["agent", "opponent"])
    for r in rows:
        y = per_deal_scores(run3, r["agent A"], r["agent B"])
        cell = r["A finishes ahead, per deal [95% CI]"]
        se = y.std(ddof=1) / math.sqrt(len(y))
        t = student_t.ppf(0.975, len(y) - 1)
        assert _value(cell) == pytest.approx(100 * y.mean(), abs=0.006)
        assert _bounds(cell) == pytest.approx((100 * (y.mean() - t * se), 100 * (y.mean() + t * se)), abs=0.006)
        s = summary.loc[(r["agent A"], r["agent B"])]
        assert _value(cell) == pytest.approx(100 * (s.beats + s.ties / 2) / s.rounds, abs=0.006)
        assert _value(r["deals"]) == len(y) == 500 and r["rounds per deal"] == "6"
        adj = r["adjusted by control variates [95% CI]"]
        lo, hi = _bounds(adj)
        assert lo < _value(adj) < hi and abs(_value(adj) - _value(cell)) < 0.5     # unbiased: near the plain one
        assert r["worth"].endswith("x rounds")


def test_the_variance_sentence_states_the_measured_factor(html3):
    rows = tables(html3)["Paired differences and variance reduction"]
    factors = [float(r["worth"].split("x")[0]) for r in rows]
    sentence = re.search(r'<p id="variance-sentence">(.*?)</p>', html3).group(1)
    lo, hi = f"{min(factors):.2f}x", f"{max(factors):.2f}x"
    assert (f"worth {lo} to {hi} the rounds" if lo != hi else f"worth {lo} the rounds") in sentence
    assert "explain almost nothing" in sentence                 # balanced seats: factor about 1
    assert all(0.8 < f < 1.05 for f in factors)


def test_power_table_from_the_per_deal_sd(run3, html3):
    rows = tables(html3)["Power"]
    assert len(rows) == 6 and [r["to detect"] for r in rows] == ["0.5pp"] * 3 + ["1pp"] * 3
    paired = {(r["agent A"], r["agent B"]): r for r in tables(html3)["Paired differences and variance reduction"]}
    for r in rows:
        y = per_deal_scores(run3, r["agent A"], r["agent B"])
        diff = 0.005 if r["to detect"] == "0.5pp" else 0.01
        deals = _deals_t(y.std(ddof=1), diff)
        assert _value(r["deals"]) == deals
        assert _value(r["--rounds of a run like this"]) == 6 * deals == _value(r["of them with the pair together"])
        factor = float(paired[(r["agent A"], r["agent B"])]["worth"].split("x")[0])
        cv = 6 * _deals_t(y.std(ddof=1) / math.sqrt(factor), diff)
        assert _value(r["with control variates"]) == pytest.approx(cv, rel=0.01)
    assert "which plays 6 rounds per deal" in html3


def _deals_t(sd, diff):
    """The fewest deals n with (t_{.975, n-1} + t_{.8, n-1}) sd / diff <= sqrt(n) (scipy's t), from
    the normal formula's answer: the deals of the power formula with Student's t."""
    n = max(2, math.ceil(((Z95 + Z80) * sd / diff) ** 2))
    while math.ceil(((student_t.ppf(0.975, n - 1) + student_t.ppf(0.8, n - 1)) * sd / diff) ** 2) > n:
        n += 1
    return n


# --- runs where sections differ -----------------------------------------------------------------

def test_stopping_section_only_for_an_until_run(tmp_path):
    run = _run(tmp_path / "until", players=2, rounds=200_000, until="decided", precision="2pp", chunk_size=1200)
    stop = pd.read_json(run / "manifest.json", typ="series")["stop"]
    html = _html(run)
    assert "<h2>Stopping</h2>" in html
    reason = re.search(r'<p id="stop-reason"><b>Why it stopped:</b> (.*?)</p>', html).group(1)
    assert reason == stop["reason"].replace("<", "&lt;").replace(">", "&gt;") and reason.startswith("decided")
    rows = tables(html)["Stopping"]
    assert len(rows) == len(stop["pairs"]) == 3
    for r, p in zip(rows, stop["pairs"]):
        assert (r["agent A"], r["agent B"]) == tuple(p["agents"]) and r["status"] == p["status"]
        assert r["status"] in ("separated", "precise")
        assert _value(r["deals"]) == p["deals"] == stop["deals"]
        assert r["A finishes ahead [confidence sequence]"] == fmt_pct(p["mean"], p["lo"], p["hi"], digits=2)
    assert "precision 2pp" in html and "alpha 0.05" in html


def test_report_of_a_match_run_skips_paired_and_power(tmp_path):
    run = _run(tmp_path / "matches", rounds=None, matches=40)
    html = _html(run)
    heads = re.findall(r"<h2>(.*?)</h2>", html)
    assert "Matches" in heads and "Ratings" in heads
    assert "Paired differences and variance reduction" not in heads and "Power" not in heads
    assert "Paired differences and power: not shown (a run of matches" in html


def test_rotations_warn_that_pairs_reflect_the_seating_order(tmp_path):
    run = _run(tmp_path / "rot", rounds=600, seating="rotations")
    html = _html(run)
    assert html.count("WARNING: with 3 seats the pairwise figures") == 2       # head-to-head and method
    assert "cyclic rotations (--seating rotations)" in html and "3 rotations" in html


def test_two_agents_have_no_ratings_but_paired_and_power(tmp_path):
    run = _run(tmp_path / "two", agents=["greedy", "random"], players=2, rounds=800)
    html = _html(run)
    heads = re.findall(r"<h2>(.*?)</h2>", html)
    assert "Ratings" not in heads and "Power" in heads
    assert "Ratings: not shown (2 agents" in html
    rows = tables(html)["Paired differences and variance reduction"]
    assert len(rows) == 1 and r"2! = 2 seatings" in html
    y = per_deal_scores(run, "greedy", "random")
    assert _value(rows[0]["A finishes ahead, per deal [95% CI]"]) == pytest.approx(100 * y.mean(), abs=0.006)


def test_cycles_and_marks_of_an_intransitive_metagame():
    """Rock-paper-scissors among three agents: the report lists the significant cycle and
    marks every share whose interval excludes 50%."""
    units = np.arange(400)
    rng = np.random.default_rng(5)
    a, b, score = [], [], []
    for x, y, s in ((0, 1, 0.7), (1, 2, 0.7), (0, 2, 0.3)):       # 0 > 1 > 2 > 0
        a.append(np.full(len(units), x))
        b.append(np.full(len(units), y))
        score.append(rng.binomial(10, s, len(units)).astype(float))
    c = Comparisons(["rock", "paper", "scissors"], np.tile(units, 3), np.concatenate(a), np.concatenate(b),
                    np.concatenate(score), np.full(3 * len(units), 10.0), np.array([8000] * 3), len(units), 12000)
    df = rate_comparisons(c, bootstrap=50)
    lines = research.cycles_lines(df)
    assert lines[0].startswith("1 cycle, 1 significant")
    ring = ["rock", "paper", "scissors"]
    rotations = {" > ".join(ring[i:] + ring[:i] + ring[i:i + 1]) for i in range(3)}
    assert lines[1].split(":")[0] in rotations and "SIGNIFICANT" in lines[1]
    steps = [(float(v), float(lo)) for v, lo in re.findall(r"([\d.]+)% \(lower end ([\d.]+)%\)", lines[1])]
    assert len(steps) == 3 and all(50 < lo < v and abs(v - 70) < 3 for v, lo in steps)
    assert "bootstrap support 100%" in lines[1]
    _, rows = research.pairwise_table(df)
    marked = [cell for row in rows for cell in row[1:] if cell not in ("-",)]
    assert len(marked) == 6 and all(cell.endswith(" *") for cell in marked)


def test_agents_that_play_alike_get_no_interval_factor_or_size(tmp_path):
    """greedy and king-first at 2 players: level in every deal. The paired row says so instead
    of a zero-width interval and a 0.00x factor, the sentence says there is no spread to reduce,
    and the power rows show no size (the formula on an sd of 0 said 2 deals)."""
    run = _run(tmp_path / "alike", agents=["greedy", "king-first"], players=2, rounds=800)
    html = _html(run)
    (row,) = tables(html)["Paired differences and variance reduction"]
    assert row["A finishes ahead, per deal [95% CI]"] == "50.00% in every deal (they played identically)"
    assert row["worth"] == "-" and row["adjusted by control variates [95% CI]"] == "-"
    assert "Every pair was level in every deal of this run" in html and "0.00x" not in html
    power = tables(html)["Power"]
    assert len(power) == 2 and all(r["deals"] == "- (level in every deal)" for r in power)
