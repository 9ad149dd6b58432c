"""The report's Sample rounds: per line-up the deal whose results differ most between
seatings (checked against a brute-force count over the run's parts), shown as replays of
its best and worst seating that play the run's rounds again exactly; the section can be
left out, and only first rounds of matches are sampled."""

import json
import re

import pyarrow.parquet as pq
import pytest

from kc_sim.analysis.report import sample_deals, write_report
from kc_sim.cli.root import main
from kc_sim.runs import RunReader


def run(tmp_path, name, *args):
    out = tmp_path / name
    assert main(["tournament", *args, "--jobs", "1", "--out", str(out)]) == 0
    return out


def all_rows(run_dir) -> list[dict]:
    rows = []
    for p in RunReader(run_dir).parts():
        rows += pq.read_table(p).to_pylist()
    return rows


def brute_spreads(rows, players, first_rounds_only=False) -> dict:
    """(line-up, deal) -> sum over agents of (max - min penalty) across seatings."""
    pens: dict = {}
    for r in rows:
        if first_rounds_only and r.get("match_round") not in (None, 0):
            continue
        for s in range(players):
            if r[f"penalty_{s}"] is not None:
                pens.setdefault((r["lineup"], r["group"], r[f"agent_{s}"]), []).append(r[f"penalty_{s}"])
    out: dict = {}
    for (lu, g, _), v in pens.items():
        out[(lu, g)] = out.get((lu, g), 0) + max(v) - min(v)
    return out


def docs_of(page: str) -> list[dict]:
    return [json.loads(b) for b in re.findall(r'<script type="application/json" data-role="doc">(.*?)</script>',
                                              page, re.S)]


@pytest.fixture(scope="module")
def two_player_run(tmp_path_factory):
    return run(tmp_path_factory.mktemp("rep"), "r2", "--agents", "greedy,merger,random", "--players", "2",
               "--rounds", "300")


def test_the_report_replays_the_widest_deal_of_every_lineup(two_player_run):
    page_path = write_report(two_player_run, bootstrap=20)
    page = page_path.read_text(encoding="utf-8")
    assert "<h2>Sample rounds</h2>" in page
    rows = all_rows(two_player_run)
    spreads = brute_spreads(rows, 2)
    deals = sample_deals(two_player_run, 2, ["greedy", "pile-merger", "random"])
    assert sorted(d.lineup for d in deals) == [0, 1, 2]
    for d in deals:
        best = max(v for (lu, _), v in spreads.items() if lu == d.lineup)
        assert d.spread == spreads[(d.lineup, d.group)] == best
        assert f"Line-up {d.lineup}: " in page and f"deal {d.group} (ranges sum to {d.spread})" in page
    docs = docs_of(page)
    assert len(docs) == 2 * len(deals)
    # each replay is the run's round played again: same deal seed, same penalties by seat
    by_key = {(r["lineup"], r["group"], r["seating"]): r for r in rows}
    for d, pair in zip(deals, zip(docs[::2], docs[1::2])):
        for row, doc in zip(d.rows, pair):
            r = by_key[(d.lineup, d.group, row["seating"])]
            assert doc["seed"] == r["seed"] and doc["matches"] is True
            assert doc["steps"][-1]["penalties"] == [r["penalty_0"], r["penalty_1"]]
            assert doc["names"] == [r["agent_0"], r["agent_1"]]
        # best and worst seating for the agent with the widest range
        pen = [next(row[f"penalty_{s}"] for s in range(2) if row[f"agent_{s}"] == d.agent) for row in d.rows]
        assert pen[0] < pen[1]
    assert "did not play the same way again" not in page
    assert page.count('class="kc-replay"') == len(docs) and page.count("function draw(doc, pos, show, mark)") == 1


def test_fewer_lineups_and_no_section(two_player_run, tmp_path):
    spreads = brute_spreads(all_rows(two_player_run), 2)
    top = sorted({lu: max(v for (l2, _), v in spreads.items() if l2 == lu) for lu in range(3)}.items(),
                 key=lambda kv: -kv[1])
    deals = sample_deals(two_player_run, 2, ["greedy", "pile-merger", "random"], lineups=1)
    assert [d.lineup for d in deals] == [top[0][0]]
    two = sample_deals(two_player_run, 2, ["greedy", "pile-merger", "random"], per_lineup=2)
    assert len(two) == 6 and all(a.spread >= b.spread for a, b in zip(two[::2], two[1::2]))
    page = write_report(two_player_run, tmp_path / "plain.html", bootstrap=20, replays=0).read_text()
    assert "Sample rounds" not in page and 'class="kc-replay"' not in page


def test_matches_sample_first_rounds_only(tmp_path):
    r = run(tmp_path, "m3", "--agents", "greedy,random,merger", "--players", "3", "--matches", "60")
    rows = all_rows(r)
    spreads = brute_spreads(rows, 3, first_rounds_only=True)
    (d,) = sample_deals(r, 3, ["greedy", "pile-merger", "random"])
    assert d.spread == max(spreads.values()) and all(row["match_round"] == 0 for row in d.rows)


def test_report_replays_option(two_player_run, tmp_path, capsys):
    """``kc-sim report --replays N``: N deals per line-up (two seatings each); 0 leaves the section out."""
    for n, docs in ((0, 0), (2, 2 * 2 * 3)):
        page = tmp_path / f"r{n}.html"
        assert main(["report", str(two_player_run), "--replays", str(n), "-o", str(page)]) == 0
        assert len(docs_of(page.read_text())) == docs
    assert main(["report", str(two_player_run), "--replays", "-1"]) == 2
    assert "bad --replays -1" in capsys.readouterr().err
