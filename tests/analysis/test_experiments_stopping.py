"""Tests of early stopping in experiment files: the run keys ``until``, ``max_rounds``,
``precision``, ``alpha`` and ``repeat`` (their checks, defaults and ``--scale``), and the
``stopping`` comparison end to end on tiny real runs: its findings are checked against the
runs' manifests and against the per-deal scores recomputed from the whole run at once.

Everything runs in tmp folders; nothing reads ``results/``."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from kc_sim.analysis.experiments import (
    load_experiment,
    parse_experiment,
    run_experiment,
)
from kc_sim.analysis.experiments.schema import REPEAT_MAX, repeat_name
from kc_sim.analysis.experiments.stopping import (
    Stop,
    compare_fixed,
    false_decisions,
    read_stop,
    replay,
    saved_or_cost,
)
from kc_sim.errors import UserError
from kc_sim.runs import PairStop
from kc_sim.stats import pair_deal_scores, wilson_scalar
from kc_sim.stats.sequential import fixed_n_for_halfwidth
from kc_sim.tournament.plan import DEFAULT_ROUNDS

ROOT = Path(__file__).resolve().parents[2]

GOOD = """
name = "x"
question = "Does it stop?"
seed = 40
[compare]
kind = "stopping"
[defaults]
players = 2
until = "decided"
[[runs]]
name = "a"
agents = ["random:1", "random:2"]
max_rounds = 1000
repeat = 3
"""


def _load(tmp_path, text):
    f = tmp_path / "e.toml"
    f.write_text(text)
    return load_experiment(f)


# --- the schema --------------------------------------------------------------------------

@pytest.mark.parametrize("text, message", [
    (GOOD.replace("max_rounds = 1000", "rounds = 1000"), "rounds and until both set"),
    (GOOD.replace("max_rounds = 1000", "max_rounds = 1000\nrounds = 1000"), "rounds and until both set"),
    (GOOD.replace("max_rounds = 1000", "matches = 10"), "matches and until both set"),
    (GOOD.replace("max_rounds = 1000", ""), "needs max_rounds = N"),
    (GOOD.replace("max_rounds = 1000", "max_rounds = 0"), "max_rounds must be a whole number >= 1"),
    (GOOD.replace('until = "decided"', 'until = "forever"'), "until must be one of 'decided'"),
    (GOOD.replace('until = "decided"', "until = true"), "until must be one of"),
    (GOOD.replace("max_rounds = 1000", 'max_rounds = 1000\nprecision = "abc"'), "precision must be a half-width"),
    (GOOD.replace("max_rounds = 1000", 'max_rounds = 1000\nprecision = "150pp"'), "precision must be a half-width"),
    (GOOD.replace("max_rounds = 1000", "max_rounds = 1000\nprecision = true"), "precision must be a text"),
    (GOOD.replace("max_rounds = 1000", "max_rounds = 1000\nalpha = 1.5"), "alpha must be a number between 0 and 1"),
    (GOOD.replace("max_rounds = 1000", "max_rounds = 1000\nalpha = true"), "alpha must be a number"),
    (GOOD.replace("repeat = 3", "repeat = 0"), "repeat must be a whole number >= 1"),
    (GOOD.replace("repeat = 3", f"repeat = {REPEAT_MAX + 1}"), f"repeat must be a whole number from 1 to {REPEAT_MAX:,}"),
    (GOOD.replace("repeat = 3", "repeat = 3\nseed = 9223372036854775806"), "go beyond 2**63 - 1"),
    (GOOD.replace("repeat = 3", "repeat = 3\nrepeats = 4"), "unknown key(s) repeats"),
    (GOOD.replace('kind = "stopping"', 'kind = "stopping"\naa = ["zz"]'), "[compare] aa names 'zz', not a run"),
    (GOOD.replace('kind = "stopping"', 'kind = "stopping"\naa = [1]'), "[compare] aa must be a list of run names"),
    (GOOD.replace('kind = "stopping"', 'kind = "stopping"\nagent = "a"'), "unknown key(s) agent for kind stopping"),
    # fixed-size runs: the stopping keys need until, and a stopping experiment needs until
    (GOOD.replace('until = "decided"', ""), "max_rounds set without until"),
    (GOOD.replace('until = "decided"', "").replace("max_rounds = 1000", "rounds = 1000\nalpha = 0.1"),
     "alpha set without until"),
    (GOOD.replace('until = "decided"', "").replace("max_rounds = 1000", "rounds = 1000"),
     "a stopping experiment compares runs that stop early"),
    (GOOD.replace('kind = "stopping"', 'kind = "seats"'), "repeat is for [compare] kind = \"stopping\""),
])
def test_bad_stopping_keys(tmp_path, text, message):
    f = tmp_path / "bad.toml"
    f.write_text(text)
    with pytest.raises(UserError, match=re.escape(message)) as err:
        load_experiment(f)
    if "run" in message or "until" in message or "repeat" in message:
        assert str(err.value).startswith(f"{f}: ")      # the file is named (and the run, below)
    if "aa" not in message and "kind" not in message and "unknown key" not in message:
        assert f"{f}: run 'a': " in str(err.value)


def test_stopping_keys_are_read_and_scaled(tmp_path):
    exp = _load(tmp_path, GOOD.replace("max_rounds = 1000", 'max_rounds = 1000\nprecision = "0.5pp"\nalpha = 0.1')
                + '[[runs]]\nname = "b"\nagents = "greedy,random"\nmax_rounds = 5000\nprecision = 0.02\n')
    a, b = exp.runs
    assert (a.until, a.precision, a.alpha, a.repeat, a.rounds, a.count, a.mode) == \
        ("decided", 0.005, 0.1, 3, 1000, 1000, "rounds")
    assert (b.precision, b.alpha, b.repeat, b.seed) == (0.02, None, None, 40)
    assert a.until_args == {"until": "decided", "precision": 0.005, "alpha": 0.1}
    assert exp.kind == "stopping" and exp.aa == ("a",)          # random:1 vs random:2 is one agent
    # repeats: consecutive seeds, one folder each; a single run is its own folder
    assert a.folders(tmp_path) == [(tmp_path / "r000", 40), (tmp_path / "r001", 41), (tmp_path / "r002", 42)]
    assert b.folders(tmp_path / "b") == [(tmp_path / "b", 40)]
    assert repeat_name(1234) == "r1234"
    # --scale: max_rounds and repeats, at least one deal and two repeats
    s = a.scaled(0.01)
    assert (s.rounds, s.repeat) == (10, 2)
    assert (a.scaled(0.5).rounds, a.scaled(0.5).repeat) == (500, 2)
    assert (a.scaled(2).rounds, a.scaled(2).repeat) == (2000, 6)
    assert b.scaled(0.0001).rounds == 2 and b.scaled(0.0001).repeat is None
    one = parse_experiment({"name": "y", "question": "q?", "compare": {"kind": "stopping"},
                            "runs": [{"name": "r", "agents": ["a", "b"], "until": "decided", "max_rounds": 10,
                                      "repeat": 1}]})
    assert one.runs[0].scaled(0.01).repeat == 1 and one.aa == ()


def test_a_runs_own_size_replaces_the_defaults(tmp_path):
    """[defaults] rounds = N does not clash with a run's until + max_rounds (and back)."""
    text = """
name = "x"
question = "q?"
[compare]
kind = "head_to_head"
agent = "greedy"
opponent = "random"
[defaults]
rounds = 5000
players = 2
[[runs]]
name = "fixed"
agents = "greedy,random"
[[runs]]
name = "early"
agents = "greedy,random"
until = "decided"
max_rounds = 9000
"""
    fixed, early = _load(tmp_path, text).runs
    assert (fixed.rounds, fixed.until) == (5000, None)
    assert (early.rounds, early.until, early.repeat) == (9000, "decided", None)


def test_explicit_aa_runs(tmp_path):
    exp = _load(tmp_path, GOOD.replace('kind = "stopping"', 'kind = "stopping"\naa = ["b"]')
                + '[[runs]]\nname = "b"\nagents = "greedy,random"\nmax_rounds = 500\n')
    assert exp.aa == ("b",)


# --- the helpers -------------------------------------------------------------------------

def _stop(statuses, reason="decided: ...") -> Stop:
    pairs = tuple(PairStop(("a", "b"), 10, 0.5, 0.4, 0.6, s) for s in statuses)
    return Stop(Path("."), 0, 20, 10, reason, "x", pairs, 0.05, None)


def test_false_decisions_rate_interval_and_verdict():
    stops = [_stop(["separated"])] + [_stop(["precise"])] * 19
    f = false_decisions(stops, 0.05)
    assert (f["n"], f["false"], f["rate"], f["verdict"]) == (20, 1, 0.05, "within alpha")
    assert (f["lo"], f["hi"]) == wilson_scalar(1, 20)
    # any pair separated counts, even at the maximum size or beside a precise pair
    stops = [_stop(["precise", "separated"]), _stop(["open", "separated"], "maximum size reached; ...")] \
        + [_stop(["precise", "open"])] * 18
    f = false_decisions(stops, 0.05)
    assert (f["false"], f["rate"], f["verdict"]) == (2, 0.1, "above alpha")
    assert false_decisions([_stop(["open"])] * 5, 0.05)["hi"] == pytest.approx(wilson_scalar(0, 5)[1])


def test_saved_or_cost_wording():
    assert saved_or_cost(50_000, 200_000) == "saved 75%"
    assert saved_or_cost(300_000, 100_000) == "cost 3.0x the rounds"
    assert saved_or_cost(100, math.nan) == "-"


# --- end to end --------------------------------------------------------------------------

TINY = """
name = "tiny_stop"
question = "Does it stop?"
seed = 11
[compare]
kind = "stopping"
[defaults]
players = 2
until = "decided"
chunk_size = 1000
[[runs]]
name = "aa"
agents = ["random:1", "random:2"]
precision = "3pp"
max_rounds = 20_000
repeat = 3
[[runs]]
name = "gr"
agents = ["greedy", "random"]
max_rounds = 40_000
repeat = 2
seed = 5
[[runs]]
name = "capped"
agents = ["random:1", "random:2"]
max_rounds = 3000
seed = 77
"""


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    base = tmp_path_factory.mktemp("stopping")
    src = base / "tiny.toml"
    src.write_text(TINY)
    res = run_experiment(load_experiment(src), jobs=1, out=base / "out", plots=False)
    return res


def _manifest(folder: Path) -> dict:
    return json.loads((folder / "manifest.json").read_text())


def _row(text: str, section: str, run: str) -> list[str]:
    """The cells of a run's row in a findings table of the section ``### section``."""
    part = text.split(f"### {section}", 1)[1].split("###", 1)[0]
    for line in part.splitlines():
        if line.startswith(f"| {run} |"):
            return [c.strip() for c in line.strip("|").split(" | ")]
    raise AssertionError(f"no row {run} in {section}")


def test_repeats_are_runs_with_consecutive_seeds(tiny):
    out = tiny.out
    for name, seeds in (("aa", [11, 12, 13]), ("gr", [5, 6])):
        folders = sorted(p for p in (out / name).iterdir() if p.is_dir())
        assert [p.name for p in folders] == [repeat_name(i) for i in range(len(seeds))]
        for folder, seed in zip(folders, seeds):
            m = _manifest(folder)
            assert m["config"]["seed"] == seed and m["finished"] and "stop" in m
            assert m["config"]["until"] == {"until": "decided", "alpha": 0.05,
                                            "precision": 0.03 if name == "aa" else None}
            assert m["config"]["requested"] == (20_000 if name == "aa" else 40_000)
    assert (out / "capped" / "manifest.json").exists()                 # no repeat: the run's own folder
    assert not (out / "capped" / "r000").exists()


def test_findings_of_the_aa_runs_match_the_manifests(tiny):
    text = tiny.markdown
    assert text == (tiny.out / "findings.md").read_text()
    assert "## Runs" in text and "## Results" in text and "## Summary" in text
    stops = [read_stop(tiny.out / "aa" / repeat_name(i)) for i in range(3)]
    rounds = sorted(_manifest(s.folder)["rounds"] for s in stops)
    assert all(s.kind == "precise" and not s.separated for s in stops)    # 3 pp: decided by precision
    assert all(r < 20_000 for r in rounds)                                   # well before the cap
    row = _row(text, "A/A runs", "aa")
    lo, hi = wilson_scalar(0, 3)
    assert row[2:8] == ["3", "0.05", "3 precise", "0", f"0.00% [{100 * lo:.2f}, {100 * hi:.2f}]", "within alpha"]
    assert row[8] == f"{rounds[1]:,} [{rounds[0]:,}, {rounds[2]:,}]"
    # the capped single run: stopped at its maximum size, the reason printed as the run printed it
    capped = read_stop(tiny.out / "capped")
    assert capped.kind == "maximum size" and capped.rounds == 3000
    assert _row(text, "A/A runs", "capped")[4] == "1 maximum size"
    assert f"| capped | {capped.reason} |" in text
    assert "aa (A/A: random:1, random:2, 3 repeats, alpha 0.05): 0 of 3 repeats stopped" in text


def _scores_at_once(folder: Path):
    """Per-deal scores of a 2-agent run from all its parts at once (pyarrow, no replay)."""
    m = _manifest(folder)
    t = pq.read_table(folder / "rounds")
    labels = m["config"]["labels"]
    agents = np.stack([np.array([labels.index(x) for x in t.column(f"agent_{s}").to_pylist()]) for s in range(2)], 1)
    pen = np.stack([t.column(f"penalty_{s}").fill_null(-1).to_numpy() for s in range(2)], 1)
    _, score, _ = pair_deal_scores(t.column("group").to_numpy(), agents, pen, np.array([[0, 1]]))
    return score[:, 0]


def test_known_difference_against_fixed_size_runs(tiny):
    text = tiny.markdown
    used, fixed, hws = [], [], []
    for i in range(2):
        folder = tiny.out / "gr" / repeat_name(i)
        m = _manifest(folder)
        pair = m["stop"]["pairs"][0]
        assert pair["status"] == "separated" and pair["mean"] > 0.5            # greedy ahead of random
        # the replay over the parts gives the recorded interval; its sd is the sd of all the scores
        score = _scores_at_once(folder)
        assert len(score) == pair["deals"] == m["stop"]["deals"] == m["rounds"] // 2
        (rep,) = replay(folder)
        assert rep.agents == ("greedy", "random") and rep.deals == pair["deals"]
        assert rep.lo == pytest.approx(pair["lo"], abs=1e-12) and rep.hi == pytest.approx(pair["hi"], abs=1e-12)
        assert rep.mean == pytest.approx(score.mean()) == pytest.approx(pair["mean"], abs=1e-4)
        assert rep.sd == pytest.approx(score.std(ddof=1))
        c = compare_fixed(read_stop(folder))
        hw = (pair["hi"] - pair["lo"]) / 2
        assert c.consistent
        assert c.fixed_rounds == 2 * fixed_n_for_halfwidth(score.std(ddof=1), hw, 0.05)
        assert c.fixed_rounds < m["rounds"]               # the anytime-valid interval is wider: fewer rounds
        used.append(m["rounds"])
        fixed.append(c.fixed_rounds)
        hws.append(hw)
    row = _row(text, "Runs with a difference", "gr")
    assert row[1:5] == ["greedy vs random", "2", "2 separated", "2 / 0 / 0"]
    assert row[6] == f"{np.median(used):,.0f} [{min(used):,}, {max(used):,}]"
    assert row[7] == f"{100 * np.median(hws):.2f} pp"
    assert row[9] == f"{np.median(fixed):,.0f} [{min(fixed):,.0f}, {max(fixed):,.0f}]"
    assert row[10] == f"cost {sum(used) / sum(fixed):.1f}x the rounds"
    assert row[12] == f"saved {1 - sum(used) / (2 * DEFAULT_ROUNDS):.0%}"
    assert (f"against it stopping cost {sum(used) / sum(fixed):.1f}x the rounds. Against the default fixed-size run "
            f"of {DEFAULT_ROUNDS:,} rounds per repeat") in text


def test_declared_aa_run_with_a_real_difference_counts_false_decisions(tmp_path):
    """greedy vs random declared A/A: every separated stop is counted as a false decision."""
    src = tmp_path / "e.toml"
    src.write_text(TINY.replace('kind = "stopping"', 'kind = "stopping"\naa = ["gr"]')
                   .replace("repeat = 3", "repeat = 2").replace('precision = "3pp"', 'precision = "8pp"'))
    res = run_experiment(load_experiment(src), jobs=1, out=tmp_path / "o", plots=False)
    row = _row(res.markdown, "A/A runs", "gr")
    assert row[4:8] == ["2 separated", "2", f"100.00% [{100 * wilson_scalar(2, 2)[0]:.2f}, 100.00]", "above alpha"]
    # with aa given, the runs of one agent not named there are reported as runs with a difference
    assert _row(res.markdown, "Runs with a difference", "aa")[3] == "2 precise"
    assert _row(res.markdown, "Runs with a difference", "capped")[3] == "1 maximum size"


def test_rerun_resumes_and_another_size_is_refused(tiny):
    out = tiny.out
    before = {p: p.stat().st_mtime_ns for p in out.rglob("part-*.parquet")}
    src = Path(tiny.experiment.source)
    again = run_experiment(load_experiment(src), jobs=1, out=out, plots=False)
    assert again.markdown.split("## Results")[1] == tiny.markdown.split("## Results")[1]
    assert before and {p: p.stat().st_mtime_ns for p in out.rglob("part-*.parquet")} == before   # nothing replayed
    with pytest.raises(UserError, match=r"run 'aa/r000'.*different run"):
        run_experiment(load_experiment(src), scale=0.5, jobs=1, out=out, plots=False)


def test_the_stopping_experiment_file():
    exp = load_experiment(ROOT / "experiments" / "stopping.toml")
    assert exp.kind == "stopping" and set(exp.aa) == {r.name for r in exp.runs if r.agents[0].startswith("random")}
    aa = [r for r in exp.runs if r.name in exp.aa]
    assert all(r.until == "decided" and r.repeat >= 200 for r in aa)
    assert {tuple(sorted(r.agents)) for r in exp.runs if r.name not in exp.aa} == \
        {("greedy", "random"), ("greedy", "pile-merger")}
    # seeds far apart: no two runs share a deal
    ranges = sorted((r.seed, r.seed + (r.repeat or 1)) for r in exp.runs)
    assert all(a[1] <= b[0] for a, b in zip(ranges, ranges[1:]))
