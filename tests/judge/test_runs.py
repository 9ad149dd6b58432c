"""Decision analysis over a run: record dicts judged without a file, ``kc-sim analyse RUN_DIR
--sample N`` on a tournament's saved records (per agent, intervals clustered by round), its
one-line errors, and ``kc-sim report RUN_DIR --analyse N``."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import time

import psutil
import pytest

from kc_sim.errors import UserError
from kc_sim.judge.analyse import analyse_file, analyse_records
from kc_sim.judge.by_agent import agent_figures
from kc_sim.judge.sample import sample_indices
from kc_sim.stats.intervals import mean_from_sums
from tests.judge.test_cli import kc_sim
from tests.ui.test_terminal import as_a_foreground_job


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """A small 2-player tournament that saved 6 game records."""
    out = tmp_path_factory.mktemp("judged") / "run"
    r = kc_sim("tournament", "--agents", "greedy,random", "--players", "2", "--rounds", "40", "--records", "6",
               "--jobs", "1", "--quiet", "--out", out)
    assert r.returncode == 0, r.stderr
    assert (out / "records.jsonl").is_file()
    return out


def test_record_dicts_are_judged_as_the_file_is(run):
    path = run / "records.jsonl"
    recs = [json.loads(x) for x in path.read_text().splitlines()]
    a = analyse_file(path, rounds=[1, 4], evaluator="greedy", budget=32, seed=5)
    b = analyse_records([(1, recs[1]), (4, recs[4])], evaluator="greedy", budget=32, seed=5)
    for ra, rb in zip(a["rounds"], b["rounds"]):
        assert ra["record"] == rb["record"] and ra["decisions"] == rb["decisions"] and ra["seats"] == rb["seats"]
    assert a["seats"] == b["seats"]
    bad = dict(recs[0], result={**recs[0]["result"], "penalties": [99, 99]})
    with pytest.raises(UserError, match="not a valid round"):
        analyse_records([bad], evaluator="greedy", budget=8)
    with pytest.raises(UserError):
        analyse_records([], evaluator="greedy")


def test_the_sample_is_seeded_distinct_and_checked():
    a = sample_indices(50, 10, 3)
    assert a == sample_indices(50, 10, 3) and len(set(a)) == 10 and a == sorted(a) and max(a) < 50
    assert a != sample_indices(50, 10, 4)
    for n in (0, -2, 51):
        with pytest.raises(UserError, match="--sample"):
            sample_indices(50, n, 0)


def _round(players, seats):
    """A hand-made round of an analysis report: per seat (agent name), its decisions' losses
    (None: forced) and luck."""
    decisions, out = [], {}
    for s, (losses, luck) in enumerate(seats):
        for x in losses:
            decisions.append({"seat": s, "forced": x is None, "loss": x or 0.0,
                              "loss_ci": [(x or 0.0) - 1.0, (x or 0.0) + 1.0]})
        labels = {"blunder": sum(1 for x in losses if x and x >= 12), "mistake": 0, "inaccuracy": 0}
        out[str(s)] = {"decisions": len(losses), "labels": labels, "luck": {"total": luck}}
    return {"players": players, "winner": 0, "seats": out, "decisions": decisions}


def test_agent_figures_are_ratios_of_per_round_sums():
    """Per agent, not per seat: an agent's seats of a round pool into one cluster; the error
    rate is the ratio estimator over rounds with its interval (kc_sim.stats)."""
    report = {"luck": True, "rounds": [
        _round(["a", "b"], [([2.0, 0.0, None], 10.0), ([5.0], -10.0)]),
        _round(["b", "a"], [([1.0, 3.0], 4.0), ([0.0, 20.0, 4.0, None], -4.0)]),
        _round(["a", "a"], [([0.0], 1.0), ([6.0, 0.5], 2.0)]),
    ]}
    figs = agent_figures(report)
    a = figs["a"]
    assert a["rounds"] == 3 and a["seats"] == 4 and a["judged"] == 2 + 3 + 3 and a["decisions"] == 3 + 4 + 3
    S, N = [2.0, 24.0, 6.5], [2, 3, 3]
    m, lo, hi = mean_from_sums(S, N, paired=True)
    assert lo < 0 and a["error_rate"] == [round(m, 3), 0.0, round(hi, 3)]   # a loss's bounds are cut at 0
    assert math.isclose(a["error_rate"][0], sum(S) / sum(N), abs_tol=1e-3)
    assert math.isclose(a["loss_per_round"][0], sum(S) / 4, abs_tol=1e-3)
    assert math.isclose(a["luck"][0], (10 - 4 + 3) / 4, abs_tol=1e-3)
    assert a["labels"]["blunder"] == 1 and figs["b"]["labels"]["blunder"] == 0
    # accuracy: the decisions whose interval reaches 0 (the losses of 0, 0, 0 and 0.5 here)
    assert math.isclose(a["accuracy"][0], 100 * 4 / 8, abs_tol=1e-3)
    assert figs["b"]["rounds"] == 2 and figs["b"]["error_rate"][0] == pytest.approx(9 / 3, abs=1e-3)


def test_a_loss_interval_stays_at_or_above_zero():
    """Cross-fitted losses can come out below 0; the loss is not, so its bounds are cut at 0
    and the unbiased point estimate is kept."""
    report = {"luck": False, "rounds": [_round(["a", "b"], [([-0.4, 0.1], 0.0), ([3.0], 0.0)]),
                                        _round(["a", "b"], [([-0.2], 0.0), ([1.0, 2.0], 0.0)])]}
    figs = agent_figures(report)
    m, lo, hi = mean_from_sums([-0.3, -0.2], [2, 1], paired=True)
    assert m < 0 and lo < 0 and figs["a"]["error_rate"] == [round(m, 3), 0.0, round(hi, 3)]
    assert figs["a"]["loss_per_round"][1] == 0.0
    assert figs["b"]["error_rate"][1] >= 0


def test_analyse_a_run_folder_per_agent(run):
    r = kc_sim("analyse", run, "--sample", "3", "--seed", "2", "--evaluator", "greedy", "--budget", "32", "--json")
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    assert rep["format"] == "kc-sim/analysis-sample/1" and rep["source"] == str(run)
    assert rep["records"] == 6 and rep["sample"] == 3 and len(rep["rounds"]) == 3
    assert rep["sampled"] == sample_indices(6, 3, 2) == [x["record"] for x in rep["rounds"]]
    assert set(rep["agents"]) == {"greedy", "random"}
    for fig in rep["agents"].values():
        assert fig["rounds"] == 3 and fig["error_rate"][1] <= fig["error_rate"][0] <= fig["error_rate"][2]
        assert set(fig["labels"]) == {"blunder", "mistake", "inaccuracy"} and fig["luck"] is not None
    r = kc_sim("analyse", run, "--sample", "2", "--seed", "2", "--evaluator", "greedy", "--budget", "16",
               "--no-luck")
    assert r.returncode == 0, r.stderr
    said = " ".join(r.stdout.split())           # the header wraps at the console's width (a long path)
    assert "2 of the 6 saved rounds" in said and "judged by greedy" in said
    assert "greedy" in said and "random" in said and "error rate" in said


def test_jobs_judge_in_worker_processes_with_the_same_figures(run):
    """--jobs 2 judges a round per worker process at a time; every figure (per round, per seat,
    per agent) equals the one-process analysis'."""
    args = ("analyse", run, "--sample", "4", "--seed", "9", "--evaluator", "greedy", "--budget", "24", "--json")
    one, two = kc_sim(*args), kc_sim(*args, "--jobs", "2")
    assert one.returncode == 0 and two.returncode == 0, (one.stderr, two.stderr)
    a, b = json.loads(one.stdout), json.loads(two.stdout)
    assert len(a["rounds"]) == 4 and a == b


def test_a_killed_judging_worker_ends_with_one_line(run):
    """kill -9 of a worker process while it judges: one line naming the dead worker, exit 2,
    no traceback, no process left behind."""
    proc = subprocess.Popen([sys.executable, "-m", "kc_sim.cli", "analyse", str(run), "--sample", "6", "--jobs", "2",
                             "--budget", "2048", "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        victim, deadline = None, time.monotonic() + 300
        while victim is None and proc.poll() is None and time.monotonic() < deadline:
            for child in psutil.Process(proc.pid).children(recursive=True):
                try:
                    if "loky" in " ".join(child.cmdline()) and child.cpu_times().user > 2.0:
                        victim = child
                        break
                except psutil.NoSuchProcess:
                    pass
            time.sleep(0.2)
        assert victim is not None, f"no busy worker seen (exit {proc.poll()})"
        children = psutil.Process(proc.pid).children(recursive=True)
        victim.kill()
        out, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert proc.returncode == 2 and out == "", (proc.returncode, err[-2000:])
    assert "a worker process died" in err and "or with --jobs 1" in err, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    gone, alive = psutil.wait_procs(children, timeout=30)
    assert not alive, alive


def test_ctrl_c_while_workers_judge(run):
    """Ctrl-C in a terminal once a round is judged by --jobs 2: one line, exit 130, no
    traceback from the pool's threads, no worker left."""
    pexpect = pytest.importorskip("pexpect")
    child = pexpect.spawn(sys.executable, ["-m", "kc_sim.cli", "analyse", str(run), "--sample", "6", "--jobs", "2",
                                           "--budget", "512"], encoding="utf-8", timeout=300,
                          preexec_fn=as_a_foreground_job)      # Ctrl-C not inherited as ignored
    try:
        child.expect(r"record \d+: \d+ decisions judged")
        kids = psutil.Process(child.pid).children(recursive=True)
        child.sendintr()
        child.expect(pexpect.EOF, timeout=60)
        said = child.before
    finally:
        child.close(force=True)
    assert child.exitstatus == 130, said[-2000:]
    assert "interrupted; nothing was written" in said and "Traceback" not in said and "Exception in" not in said
    gone, alive = psutil.wait_procs(kids, timeout=30)
    assert not alive, alive


@pytest.mark.parametrize("args,expected", [
    (["--jobs", "0"], "bad --jobs 0"),
    (["--sample", "0"], "bad --sample 0"),
    (["--sample", "7"], "only 6 record(s)"),
    (["--sample", "2", "--round", "1"], "bad --round with --sample"),
])
def test_bad_sample_options_are_one_line_and_exit_2(run, args, expected):
    r = kc_sim("analyse", run, *args)
    assert r.returncode == 2 and expected in r.stderr and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_a_run_without_saved_records_says_how_to_save_them(tmp_path):
    out = tmp_path / "bare"
    r = kc_sim("tournament", "--agents", "greedy,random", "--rounds", "20", "--jobs", "1", "--quiet", "--out", out)
    assert r.returncode == 0, r.stderr
    for cmd in (["analyse", out, "--sample", "2"], ["report", out, "--analyse", "2"]):
        r = kc_sim(*cmd)
        assert r.returncode == 2 and "no saved game records" in r.stderr and "--records K" in r.stderr, r.stderr
        assert len(r.stderr.strip().splitlines()) == 1
    r = kc_sim("report", out, "--analyse", "-1")
    assert r.returncode == 2 and "bad --analyse -1" in r.stderr


def test_the_report_gains_the_agents_error_rates(run, tmp_path):
    html = tmp_path / "r.html"
    r = kc_sim("report", run, "--analyse", "2", "--replays", "0", "-o", html)
    assert r.returncode == 0, r.stderr
    said = " ".join(r.stdout.split())           # the header wraps at the console's width (a long path)
    assert "2 of the 6 saved rounds" in said and "report written to" in said
    text = html.read_text()
    assert "<h2>Decision analysis</h2>" in text and "<th>error rate</th>" in text and "judged by planner" in text
    r = kc_sim("report", run, "--replays", "0", "-o", html)
    assert r.returncode == 0 and "Decision analysis" not in html.read_text()
    r = kc_sim("report", run, "--analyse", "2", "--analyse-jobs", "0", "-o", html)
    assert r.returncode == 2 and "bad --analyse-jobs 0" in r.stderr and len(r.stderr.strip().splitlines()) == 1
