"""``kc-sim train`` (the net method) for real: a short training through the command line that
beats ``random`` by a clear margin on fixed deals, its files, the trained agent in worker
processes, --resume, and bad options as one-line errors."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("torch")

from kc_sim.learn.trainer import round_return  # noqa: E402
from kc_sim.net.model import read_net  # noqa: E402

KC = [sys.executable, "-m", "kc_sim.cli"]
SHORT = ["--bc-rounds", "4000", "--bc-steps", "3000", "--rounds-per-iter", "256", "--eval-deals", "400"]


def _run(*args, timeout=600):
    return subprocess.run([*KC, *map(str, args)], capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A model trained against random for 30,000 steps (deterministic: --steps, one seed)."""
    d = tmp_path_factory.mktemp("net")
    r = _run("train", "--opponent", "random", "--steps", "30000", "--evals", "2", *SHORT, "--seed", "4",
             "--out", d / "m.zip")
    assert r.returncode == 0, r.stderr
    return d, r


def test_short_training_beats_random_clearly(trained):
    d, r = trained
    assert r.stdout.strip().splitlines()[-1] == f"agent: net:{d / 'm.zip'}"
    for text in ("behaviour cloning", "compile and start-up", "steps/s", "acting", "learning"):
        assert text in r.stderr + r.stdout
    curve = pd.read_parquet(d / "m.curve.parquet")
    assert list(curve["phase"].unique()) == ["bc", "ppo", "final"]
    assert set(curve["baseline"]) == {"random", "planner", "sampler"}
    assert ((curve["win_lo"] <= curve["win"]) & (curve["win"] <= curve["win_hi"])).all()
    final = curve[(curve["phase"] == "final") & (curve["baseline"] == "random")].iloc[0]
    assert final["steps"] >= 30000 and final["deals"] == 400 and final["rounds"] == 800
    # a clear margin: planner-like play wins about two rounds in three against random
    assert final["win_lo"] > 0.55, final
    assert (d / "m.curve.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    m = read_net(d / "m.zip")
    assert m.header["training"]["steps"] == final["steps"] and m.header["encoding"] == "actions/1"


def test_trained_agent_on_fresh_deals_in_worker_processes(trained, tmp_path):
    """A tournament plays it in worker processes (each loads the model into its own slot) on
    other deals; the parquet rows, clustered by deal, give the win rate again."""
    d, _ = trained
    name = f"net:{d / 'm.zip'}"
    r = _run("tournament", "--agents", f"{name},random", "--rounds", "4000", "--jobs", "2", "--chunk-size", "500",
             "--seed", "11", "--out", tmp_path / "run", "--quiet")
    assert r.returncode == 0, r.stderr
    rows = pd.read_parquet(tmp_path / "run" / "rounds")
    assert len(rows) == 4000 and rows["chunk"].nunique() == 8
    per_deal = (rows["winner_agent"] == name).groupby(rows["group"]).mean()
    assert per_deal.mean() - 1.96 * per_deal.std(ddof=1) / np.sqrt(len(per_deal)) > 0.55


def test_resume_goes_on_from_the_saved_model(trained, tmp_path):
    d, _ = trained
    model = tmp_path / "m.zip"
    model.write_bytes((d / "m.zip").read_bytes())
    (tmp_path / "m.curve.parquet").write_bytes((d / "m.curve.parquet").read_bytes())
    # the cloning options left out: the model keeps those it was made with (SHORT's, not the defaults)
    # PPO's return may change on the way (fine-tuning for another objective)
    r = _run("train", "--opponent", "random", "--steps", "3000", "--evals", "1", "--rounds-per-iter", "256",
             "--eval-deals", "400", "--seed", "4", "--out", model, "--resume", "--quiet", "--outcome", "decided",
             "--penalty-weight", "0.05")
    assert r.returncode == 0, r.stderr
    curve = pd.read_parquet(tmp_path / "m.curve.parquet")
    assert curve["steps"].is_monotonic_increasing and curve["steps"].iloc[-1] >= 33000
    assert "bc" not in set(curve["phase"].iloc[6:])
    made = read_net(model).header["training"]
    assert (made["recipe"], made["settings"]["bc_rounds"], made["settings"]["h1"]) == ("bc(planner)+ppo", 4000, 32)
    assert (made["settings"]["outcome"], made["settings"]["penalty_weight"]) == ("decided", 0.05)
    r = _run("train", "--opponent", "greedy", "--steps", "1000", "--out", model, "--resume")
    assert r.returncode == 2 and "cannot resume" in r.stderr and "Traceback" not in r.stderr
    for option, says in ((["--teacher", "greedy"], "--teacher planner, not greedy"),
                         (["--hidden", "64", "--bc-rounds", "4000"], "--hidden 32, not 64 (leave that option")):
        r = _run("train", "--opponent", "random", "--steps", "40000", *option, "--out", model, "--resume")
        assert r.returncode == 2 and says in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_round_return_of_each_outcome():
    """The return PPO learns from, per round, from every seat's penalty (a seat that went out
    holds nothing): a win, a loss and a blocked round at two seats, and at three."""
    pen = np.array([[0, 7], [12, 0], [3, 9]])
    assert round_return(pen, 0, "went-out", 0.0).tolist() == [1, 0, 0]
    assert round_return(pen, 0, "decided", 0.0).tolist() == [1, -1, 0]
    assert round_return(pen, 1, "decided", 0.0).tolist() == [-1, 1, 0]
    assert np.allclose(round_return(pen, 0, "decided", 0.05), [1 + 0.35, -1 - 0.6, 0.3])
    three = np.array([[0, 4, 10], [5, 0, 2], [6, 3, 1]])
    assert round_return(three, 2, "decided", 0.0).tolist() == [-1, -1, 0]
    assert np.allclose(round_return(three, 2, "went-out", 0.1), [-0.1 * (10 - 2), -0.1 * (2 - 2.5), -0.1 * (1 - 4.5)])
    assert round_return(three, 0, "decided", 0.0).dtype == np.float32


@pytest.mark.parametrize("args,says", [
    (["--opponent", "nobody"], "unknown agent 'nobody'"),
    (["--out", "model.pt"], "expected a .zip file"),
    (["--opponent", "tests/helpers/agents/buggy.py:Buggy"], "a Python agent"),
    (["--players", "9"], "players"),
    (["--envs", "8"], "--envs is not an option of --method net"),
    (["--method", "ppo", "--minutes", "3"], "--minutes is not an option of --method ppo"),
    (["--method", "sgd"], "bad --method 'sgd'"),
    (["--minutes", "0"], "bad --minutes 0"),
    (["--steps", "5", "--minutes", "1"], "one of them"),
    (["--teacher", "nobody"], "unknown agent 'nobody'"),
    (["--outcome", "score"], "bad --outcome 'score': expected went-out or decided"),
    (["--penalty-weight", "-0.1"], "bad --penalty-weight -0.1"),
    (["--method", "ppo", "--outcome", "decided"], "--outcome is not an option of --method ppo"),
])
def test_bad_input_is_one_line(args, says):
    r = _run("train", *(["--steps", "1000"] if "--steps" not in args and "--minutes" not in args else []), *args)
    assert r.returncode == 2, r.stderr
    assert says in r.stderr and len(r.stderr.strip().splitlines()) == 1
