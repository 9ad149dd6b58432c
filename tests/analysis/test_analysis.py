"""Tests of the analysis layer: ``kc-sim plot`` / ``kc-sim report`` on a small run, the
interval helpers, every experiment file at a tiny scale (and bad experiment files), and
the strategy notebook executed headless against a small run (nbclient).

Everything runs on small runs made here in tmp folders; nothing reads ``results/``."""

from __future__ import annotations

import base64
import json
import math
import re
from pathlib import Path

import numpy as np
import pytest
import typer
from typer.testing import CliRunner

from kc_sim.analysis.experiments import (
    KINDS,
    load_experiment,
    parse_experiment,
    run_experiment,
)
from kc_sim.analysis.plots import FIGURES
from kc_sim.analysis.scan import scan_run
from kc_sim.analysis.text import rules_label
from kc_sim.cli import analysis as cli_analysis
from kc_sim.errors import UserError
from kc_sim.stats import cluster_mean, cluster_rate
from kc_sim.tournament.run import run_tournament

ROOT = Path(__file__).resolve().parents[2]
EXPERIMENTS = sorted((ROOT / "experiments").glob("*.toml"))
NOTEBOOK = ROOT / "notebooks" / "strategy_analysis.ipynb"
PNG = b"\x89PNG\r\n\x1a\n"
AGENTS = ["greedy", "king-first", "merger", "random"]
TINY = 0.0015          # experiment scale in the tests: 1,500-2,250 rounds per run


def _app() -> typer.Typer:
    """The three commands on a private app (kc_sim.cli registers the same functions)."""
    app = typer.Typer(add_completion=False)
    app.command("plot")(cli_analysis.plot)
    app.command("report")(cli_analysis.report)
    app.command("run")(cli_analysis.run)
    return app


@pytest.fixture(scope="module")
def small_run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("analysis") / "run"
    run_tournament(AGENTS, players=2, rounds=3000, seed=3, jobs=1, out=out, quiet=True, chunk_size=1000)
    return out


@pytest.fixture(scope="module")
def match_run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("analysis") / "matches"
    run_tournament(["greedy", "random", "merger"], players=3, matches=60, seed=4, jobs=1, out=out, quiet=True)
    return out


@pytest.fixture(scope="module")
def tiny_experiments(tmp_path_factory) -> Path:
    """Every experiment file run at a tiny scale into one folder (as results/experiments)."""
    base = tmp_path_factory.mktemp("experiments")
    for f in EXPERIMENTS:
        exp = load_experiment(f)
        run_experiment(exp, scale=TINY, jobs=1, out=base / exp.name, plots=False)
    return base


# --- plot and report ----------------------------------------------------------------------

def test_plot_writes_every_figure(small_run):
    res = CliRunner().invoke(_app(), ["plot", str(small_run)])
    assert res.exit_code == 0, res.output
    for name, file in FIGURES.items():
        path = small_run / "figures" / file
        data = path.read_bytes()
        assert data.startswith(PNG) and len(data) > 10_000, name
        assert str(path) in res.output
    import matplotlib.image as mpimg
    img = mpimg.imread(small_run / "figures" / FIGURES["seats"])
    assert img.shape[0] > 300 and img.shape[1] > 500
    assert img[..., :3].std() > 0.05            # not a blank canvas


def test_every_figure_has_title_axis_labels_and_caption(small_run, tmp_path, monkeypatch):
    from kc_sim.analysis import plots
    seen = {}
    finish = plots._finish

    def spy(fig, data, title, name, out_dir):
        path = finish(fig, data, title, name, out_dir)
        seen[name] = fig
        return path

    monkeypatch.setattr(plots, "_finish", spy)
    plots.plot_all(small_run, tmp_path)
    assert set(seen) == set(FIGURES)
    for name, fig in seen.items():
        assert fig._suptitle is not None and fig._suptitle.get_text(), name
        main = fig.axes[0]
        assert main.get_xlabel() and main.get_ylabel(), name
        captions = [t.get_text() for t in fig.texts if "rules:" in t.get_text()]
        assert len(captions) == 1 and "classic" in captions[0] and "3,000 rounds" in captions[0], name


def test_plot_out_folder(small_run, tmp_path):
    res = CliRunner().invoke(_app(), ["plot", str(small_run), "--out", str(tmp_path / "figs")])
    assert res.exit_code == 0, res.output
    assert sorted(p.name for p in (tmp_path / "figs").iterdir()) == sorted(FIGURES.values())


def test_report_is_self_contained_html(small_run):
    res = CliRunner().invoke(_app(), ["report", str(small_run)])
    assert res.exit_code == 0, res.output
    html = (small_run / "report.html").read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>") and html.rstrip().endswith("</html>")
    images = re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', html)
    assert len(images) == len(FIGURES)
    for b64 in images:
        assert base64.b64decode(b64).startswith(PNG)
    for file in FIGURES.values():                 # every figure referenced by its file too
        assert f"figures/{file}" in html
        assert (small_run / "figures" / file).stat().st_size > 0
    for text in ("Head-to-head", "Win rate by seat", "Round length", "king-first", "pile-merger", "[", "classic"):
        assert text in html
    assert 'src="http' not in html and not re.search(r"<script[^>]*\bsrc=", html)   # nothing fetched from elsewhere
    assert "Sample rounds" in html                     # the replays: inline scripts and data only
    heads = re.findall(r"<h2>(.*?)</h2>", html)                 # the research sections (4 agents, rounds)
    assert {"Ratings", "Paired differences and variance reduction", "Power"} <= set(heads)
    assert "Stopping" not in heads and "2! = 2 seatings" in html and "Nash rating" in html


def test_report_of_a_match_run(match_run, tmp_path):
    out = tmp_path / "r.html"
    res = CliRunner().invoke(_app(), ["report", str(match_run), "--out", str(out)])
    assert res.exit_code == 0, res.output
    html = out.read_text(encoding="utf-8")
    assert "<h2>Matches</h2>" in html and "match win rate" in html
    assert "<h2>Ratings</h2>" in html and "<h2>Power</h2>" not in html       # matches: no paired score


@pytest.mark.parametrize("command", ["plot", "report"])
def test_bad_run_folder_is_a_user_error(command, tmp_path):
    with pytest.raises(UserError, match="does not exist"):
        getattr(cli_analysis, command)(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(UserError, match="not a run folder"):
        getattr(cli_analysis, command)(tmp_path / "empty")


def test_registered_commands_exit_2_on_bad_input(tmp_path, capsys):
    from kc_sim.cli import root as cli
    names = {c.name for c in cli.app.registered_commands}
    if not {"plot", "report", "run"} <= names:
        pytest.skip("plot/report/run are not registered in kc_sim.cli yet")
    assert cli.main(["plot", str(tmp_path / "nope")]) == 2
    assert cli.main(["report", str(tmp_path / "nope")]) == 2
    assert cli.main(["run", str(tmp_path / "nope.toml")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 3 and all(line.startswith("kc-sim: error:") for line in err)


# --- the numbers ----------------------------------------------------------------------------

def test_cluster_intervals():
    rng = np.random.default_rng(0)
    x = (rng.random(20_000) < 0.3).astype(float)
    # independent rounds (one per cluster): the ordinary Wilson interval
    from kc_sim.stats import wilson_scalar
    p, lo, hi = cluster_rate(x, np.arange(len(x)))
    wlo, whi = wilson_scalar(x.sum(), len(x))
    assert p == pytest.approx(x.mean()) and lo == pytest.approx(wlo, abs=2e-4) and hi == pytest.approx(whi, abs=2e-4)
    # every round repeated 4 times (self-play rotations): same rate, interval twice as wide
    rep = np.repeat(x, 4)
    p4, lo4, hi4 = cluster_rate(rep, np.repeat(np.arange(len(x)), 4))
    assert p4 == pytest.approx(p) and (hi4 - lo4) == pytest.approx(hi - lo, rel=0.02)
    naive = cluster_rate(rep, np.arange(len(rep)))
    assert (naive[2] - naive[1]) < 0.6 * (hi4 - lo4)
    # mirrored duplicates (2 players, both seats): no variation at all, the bound of 500 deals
    split = np.tile([1.0, 0.0], 500)
    f = 1 - 0.025 ** (1 / 500)
    assert cluster_rate(split, np.repeat(np.arange(500), 2)) == pytest.approx((0.5, 0.5 - f / 2, 0.5 + f / 2))
    # nothing ever happens: an interval from 0 that shrinks with the number of deals
    z = cluster_rate(np.zeros(1000), np.repeat(np.arange(250), 4))
    assert z[0] == 0 and z[1] == 0 and 0 < z[2] < 0.02
    m, mlo, mhi = cluster_mean([1.0, 2.0, 3.0, 4.0], [0, 0, 1, 1])
    assert m == 2.5 and mlo < 2.5 < mhi
    assert all(math.isnan(v) for v in cluster_mean([], []))


def test_scanned_run_matches_the_summary(small_run):
    from kc_sim.runs import read_summary
    data = scan_run(small_run)
    summary = read_summary(small_run)
    summary = summary[summary["opponent"].isna()].set_index("agent")
    assert data.n == 3000 and data.players == 2 and data.rules_label == "classic"
    for a in data.agents_seen():
        assert int(round(data.agent.total("win", a))) == summary.loc[data.labels[a], "wins"]
        assert data.agent.count(a) == summary.loc[data.labels[a], "rounds"]
    assert rules_label("classic,draw=start,layout_kings=to_corner,king_on_empty_side=false") == "draw_first"
    assert rules_label("draw=if_stuck,scoring=face") == "classic,draw=if_stuck,scoring=face"


# --- experiments -------------------------------------------------------------------------------

def test_the_five_experiment_files_parse():
    names = {f.stem for f in EXPERIMENTS}
    assert names >= {"seat_advantage", "king_first", "pile_merger", "draw_timing", "house_rules", "stopping"}
    for f in EXPERIMENTS:
        exp = load_experiment(f)
        assert exp.name == f.stem and exp.question.endswith("?") and exp.kind in KINDS and exp.runs
        for run in exp.runs:
            # full size: intervals that separate agents (a repeated run that stops early: many small runs)
            assert run.count >= 200_000 or run.matches or (run.until and run.repeat >= 20)


def test_every_experiment_runs_at_a_tiny_size(tiny_experiments):
    for f in EXPERIMENTS:
        exp = load_experiment(f)
        out = tiny_experiments / exp.name
        text = (out / "findings.md").read_text(encoding="utf-8")
        assert text.startswith(f"# Findings: {exp.name}") and exp.question in text
        assert "## Results" in text and "## Summary" in text
        assert f"kc-sim run {f}" in text and "--scale" in text
        assert re.search(r"\d+\.\d+%? \[[-+]?\d+\.\d+", text)     # numbers with intervals
        for run in exp.runs:
            for folder, seed in run.scaled(TINY).folders(out / run.name):     # <run>/r000 ... with repeat
                manifest = json.loads((folder / "manifest.json").read_text())
                assert manifest["config"]["requested"] == run.scaled(TINY).count
                assert manifest["config"]["seed"] == seed
                states = {c["state"] for c in manifest["chunks"]}
                assert states == {"done"} or (run.until and "stop" in manifest and states <= {"done", "skipped"})


def test_run_command_scales_and_resumes(tmp_path):
    src = ROOT / "experiments" / "king_first.toml"
    out = tmp_path / "kf"
    app = _app()
    res = CliRunner().invoke(app, ["run", str(src), "--scale", "0.0005", "--jobs", "1", "--out", str(out),
                                   "--no-plots", "--quiet"])
    assert res.exit_code == 0, res.output
    first = (out / "findings.md").read_text()
    assert "findings in" in res.output and "--scale 0.0005" in first
    # a second run into the same folder plays nothing new and reports the same numbers
    res = CliRunner().invoke(app, ["run", str(src), "--scale", "0.0005", "--jobs", "1", "--out", str(out), "--quiet"])
    assert res.exit_code == 0, res.output
    second = (out / "findings.md").read_text()
    assert first.split("## Results")[1] == second.split("## Results")[1]
    assert (out / load_experiment(src).runs[0].name / "figures" / "seats.png").exists()   # plots: on by default
    # another scale into the same folder is refused before anything is played
    with pytest.raises(UserError, match="different run"):
        run_experiment(load_experiment(src), scale=0.0006, jobs=1, out=out, plots=False)


GOOD = """
name = "x"
question = "Is it?"
[compare]
kind = "seats"
[[runs]]
name = "a"
agents = "greedy"
players = 2
rounds = 100
"""


@pytest.mark.parametrize("text, message", [
    ("name = 'x'\nquestion = ", "not valid TOML"),
    (GOOD.replace('question = "Is it?"', ""), "question is missing"),
    (GOOD.replace('kind = "seats"', 'kind = "sideways"'), "kind must be one of"),
    (GOOD.replace("rounds = 100", "rounds = 100\nmatches = 5"), "exactly one of rounds"),
    (GOOD.replace("rounds = 100", "rouns = 100"), "unknown key"),
    (GOOD.replace("players = 2", ""), "give players = K"),
    (GOOD.replace("rounds = 100", "rounds = -3"), "rounds must be a whole number"),
    (GOOD.replace('kind = "seats"', 'kind = "head_to_head"'), "head_to_head needs agent"),
    (GOOD + '[[runs]]\nname = "a"\nagents = "greedy"\nplayers = 2\nrounds = 10\n', "run names must be unique"),
    (GOOD.replace('name = "a"', 'name = "a"\nbaseline = "zz"'), "baseline 'zz' is not another run"),
    (GOOD.replace('name = "x"', 'name = "../x"'), "name must be"),
    (GOOD.replace('name = "x"', 'name = ".."'), "name must be"),
    (GOOD.replace('name = "a"', 'name = ".."'), "name must be"),
])
def test_bad_experiment_files(tmp_path, text, message):
    f = tmp_path / "bad.toml"
    f.write_text(text)
    with pytest.raises(UserError, match=re.escape(message)):
        load_experiment(f)


def test_bad_experiment_input(tmp_path):
    with pytest.raises(UserError, match="does not exist"):
        cli_analysis.run(tmp_path / "missing.toml")
    f = tmp_path / "e.toml"
    f.write_text(GOOD.replace('agents = "greedy"', 'agents = "gredy"'))
    with pytest.raises(UserError, match="gredy"):               # checked before anything is played
        run_experiment(f, jobs=1, out=tmp_path / "o", plots=False)
    assert not (tmp_path / "o" / "a" / "rounds").exists()
    f.write_text(GOOD)
    with pytest.raises(UserError, match="scale"):
        run_experiment(f, scale=0, jobs=1, out=tmp_path / "o")
    exp = parse_experiment({"name": "y", "question": "q?", "compare": {"kind": "head_to_head", "agent": "a",
                                                                      "opponent": ["b", "c"], "pairs": [["b", "c"]]},
                            "runs": [{"name": "r", "agents": ["a", "b"], "rounds": 10}]})
    assert exp.pairs == (("a", "b"), ("a", "c"), ("b", "c"))


# --- the notebook ------------------------------------------------------------------------------

def test_notebook_is_committed_without_outputs():
    nb = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert code and all(c["outputs"] == [] and c["execution_count"] is None for c in code)
    source = "".join("".join(c["source"]) for c in nb["cells"])
    assert "KC_SIM_RUN" in source and "/work/shared" not in source
    assert "read_rounds" not in source and "scan_run" in source        # streams the run: any size works


def test_notebook_runs_headless_and_finds_its_inputs_without_environment_variables(tiny_experiments, tmp_path,
                                                                                  monkeypatch):
    """Opened from a checkout's notebooks/ folder with nothing set, the notebook makes and
    reads the checkout's results/overview_2p (the default run) and reads the experiments in
    its results/experiments, as a person gets it; every cell runs and rebuilds its figures."""
    import shutil

    import nbclient
    import nbformat

    monkeypatch.delenv("KC_SIM_RUN", raising=False)
    monkeypatch.delenv("KC_SIM_EXPERIMENTS", raising=False)
    root = tmp_path / "checkout"
    (root / "kc_sim").mkdir(parents=True)
    (root / "pyproject.toml").write_text("")
    (root / "notebooks").mkdir()
    shutil.copytree(tiny_experiments, root / "results" / "experiments")
    shutil.copy(NOTEBOOK, root / "notebooks" / NOTEBOOK.name)
    nb = nbformat.read(root / "notebooks" / NOTEBOOK.name, as_version=4)
    nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(root / "notebooks")}}).execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.output_type == "error"]
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    assert len(images) >= 5                                       # the figures were rebuilt
    text = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    run = root / "results" / "overview_2p"
    assert f"run folder: {run}" in text and (run / "manifest.json").exists()
    assert "king-first (A) vs greedy (B)" in text
    assert "== draw_timing" in text and "not run yet" not in text
    assert "intransitive cycles:" in text and "control variates worth" in text   # ratings, paired, power
    assert sum("nash_rating" in o.get("data", {}).get("text/plain", "") for o in outputs) == 1
    assert (run / "report.html").exists()


def test_run_prints_its_findings_rendered_in_a_terminal(tmp_path):
    """kc-sim run in a real terminal (a pty, 80 columns): the findings come out rendered, not
    as markdown source: no table rules or bold markers, lines within the width, and every
    sentence whole when the lines are joined (wrapped at word boundaries, never mid-word)."""
    import sys

    import pexpect

    src = ROOT / "experiments" / "king_first.toml"
    kc_sim = Path(sys.executable).parent / "kc-sim"
    child = pexpect.spawn(str(kc_sim), ["run", str(src), "--scale", "0.0005", "--jobs", "1", "--no-plots",
                                        "--out", str(tmp_path / "kf")], encoding="utf-8", dimensions=(40, 80),
                          timeout=600)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", child.before).replace("\r", "")
    findings = text[text.index("Findings: king_first"):text.rindex("findings in")]
    lines = findings.splitlines()
    assert not any(re.match(r"\s*\|?\s*-{3,}\s*\|", x) or "**" in x or x.startswith("#") for x in lines)
    assert max(len(x) for x in lines) <= 80
    joined = " ".join(" ".join(x.split()) for x in lines)
    exp = load_experiment(src)
    assert " ".join(exp.question.split()) in joined
    assert "─" in findings                      # tables are drawn
