"""Luck-adjusted estimates (kc_sim.analysis.luck_adjusted) on real run folders: an A/A run
centres on no difference, the option goes through the command line, the manifest and the
parts, and a run without it is refused."""

import json
import subprocess
import sys

import pyarrow.parquet as pq
import pytest

from kc_sim.analysis.luck_adjusted import run_luck_adjusted
from kc_sim.errors import UserError
from kc_sim.runs.manifest import RunConfig
from kc_sim.tournament.options import TournamentOptions
from kc_sim.tournament.run import run_tournament


@pytest.fixture(scope="module")
def aa_run(tmp_path_factory):
    """An A/A run: the same agent (random play) with two seeds, so no difference is the truth."""
    out = tmp_path_factory.mktemp("luck") / "aa"
    run_tournament(["random:1", "random:2"], players=2, rounds=8000, seed=5, out=out, jobs=1, backend="sequential",
                   quiet=True, luck=True)
    return out


def test_an_aa_run_covers_no_difference(aa_run):
    (r,) = run_luck_adjusted(aa_run)
    lo, hi = r.score.interval()
    assert lo < 0.5 < hi and r.score.adj_se > 0
    lo, hi = r.penalty.interval()
    assert lo < 0 < hi
    assert r.rounds == 8000 and r.score.deals == 4000


def test_identical_agents_give_exactly_no_difference(tmp_path):
    """greedy against itself plays each deal alike in both seatings: every deal scores 1/2."""
    out = tmp_path / "gg"
    run_tournament(["greedy", "greedy"], players=2, rounds=400, seed=1, out=out, jobs=1, backend="sequential",
                   quiet=True, luck=True)
    (r,) = run_luck_adjusted(out)
    assert r.score.adj == pytest.approx(0.5) and r.penalty.adj == pytest.approx(0.0)


def test_the_parts_and_manifest_hold_the_option(aa_run):
    man = json.loads((aa_run / "manifest.json").read_text())
    assert man["config"]["luck"] is True
    assert RunConfig.from_dict(man["config"]).luck is True
    assert RunConfig.from_dict(RunConfig.from_dict(man["config"]).to_dict()).luck is True
    part = next((aa_run / "rounds").glob("*.parquet"))
    names = pq.read_schema(part).names
    assert {"luck_fit_now_0", "luck_pen_1", "luck_pen_late_0", "luck_fit_hand_1"} <= set(names)


def test_a_run_without_the_option_is_refused(tmp_path):
    out = tmp_path / "plain"
    run_tournament(["greedy", "random"], players=2, rounds=200, seed=1, out=out, jobs=1, backend="sequential",
                   quiet=True)
    assert "luck" not in json.loads((out / "manifest.json").read_text())["config"]
    assert not any(n.startswith("luck_") for n in pq.read_schema(next((out / "rounds").glob("*.parquet"))).names)
    with pytest.raises(UserError, match="--luck"):
        run_luck_adjusted(out)


def test_matches_and_if_stuck_are_refused():
    with pytest.raises(UserError, match="--luck needs single rounds"):
        TournamentOptions(agents=("greedy", "random"), matches=10, luck=True)
    with pytest.raises(UserError, match="--luck needs single rounds"):
        TournamentOptions(agents=("greedy", "random"), rounds=10, rules="classic,draw=if_stuck", luck=True)


def test_the_command_prints_the_adjusted_lines(tmp_path):
    base = [sys.executable, "-m", "kc_sim.cli", "tournament", "--agents", "random:1,greedy", "--rounds", "1000",
            "--jobs", "1", "-q"]
    on = subprocess.run(base + ["--luck", "-o", str(tmp_path / "on")], capture_output=True, text=True)
    assert on.returncode == 0, on.stderr
    assert "luck-adjusted" in on.stdout and "greedy vs random-1" in on.stdout
    assert "--luck" in json.loads((tmp_path / "on" / "manifest.json").read_text())["command"]
    off = subprocess.run(base + ["-o", str(tmp_path / "off")], capture_output=True, text=True)
    assert off.returncode == 0 and "luck-adjusted" not in off.stdout


def test_the_coverage_cells():
    """The coverage study's cells (kc_sim.analysis.coverage_luck): shares, factors and widths of a
    small A/A cell; identical agents are exact in every run."""
    from kc_sim.analysis.coverage_luck import luck_cell, luck_table

    c = luck_cell("aa-random", 40, 5)
    assert c["runs"] == 5 and c["truth"] == [0.5, 0.0] and c["score_exact"] == 0
    assert all(0 <= c[f"{w}_{k}"] <= 1 for w in ("score", "penalty") for k in ("plain", "adjusted"))
    assert c["score_factor"] > 0 and c["score_half_adjusted"] > 0
    g = luck_cell("aa-greedy", 40, 3)
    assert g["score_exact"] == g["penalty_exact"] == 3 and g["score_exact_miss"] == 0
    assert "exact in every run" in luck_table([c, g])


def test_the_report_section(aa_run, tmp_path):
    from kc_sim.analysis.luck_adjusted import luck_html
    from kc_sim.analysis.report import write_report
    from kc_sim.runs import RunReader

    html = "\n".join(luck_html(aa_run, RunReader.open(aa_run).manifest))
    assert "Luck-adjusted estimates" in html and "random-1 vs random-2" in html and "4,000" in html
    out = tmp_path / "report.html"
    write_report(aa_run, out, bootstrap=0, replays=0)
    assert "<h2>Luck-adjusted estimates</h2>" in out.read_text()


def test_the_study_reads_its_luck_cells_as_data(tmp_path):
    """experiments/interval_coverage.py reads a luck cell back only as numbers under the names it
    wrote; anything else (a pickle, text where a number belongs, another cell's name) is run again."""
    import importlib.util
    from pathlib import Path

    from kc_sim.analysis.coverage_luck import luck_cell

    path = Path(__file__).resolve().parents[2] / "experiments" / "interval_coverage.py"
    spec = importlib.util.spec_from_file_location("interval_coverage", path)
    study = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(study)
    cell = luck_cell("aa-greedy", 20, 2)
    f = tmp_path / "luck_aa-greedy_20d.json"
    f.write_text(json.dumps(cell))
    assert study.read_cell(f, "luck_aa-greedy_20d") == cell
    assert study.read_cell(f, "luck_aa-random_20d") is None
    for hostile in (b"\x80\x04\x95 a pickle", json.dumps({**cell, "score_plain": "os.system"}).encode(),
                    json.dumps({**cell, "truth": ["0.5", 0]}).encode()):
        f.write_bytes(hostile)
        assert study.read_cell(f, "luck_aa-greedy_20d") is None
