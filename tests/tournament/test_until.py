"""``--until decided``: the run stops at the same block whatever the workers, the backend or
an interruption, removes what was played beyond the stop, and says why it stopped."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

from kc_sim.cli import root
from kc_sim.runs import RunReader
from kc_sim.runs.manifest import read_manifest_json
from kc_sim.tournament import run as run_module
from kc_sim.tournament.run import run_tournament
from tests.helpers.storing import HeldWriter

DECIDES = dict(agents=["greedy", "random"], players=2, rounds=400_000, chunk_size=4_000, seed=3,
               until="decided", quiet=True)


def _parts(out):
    return {p.name: pq.read_table(p) for p in RunReader(out).parts()}


@pytest.fixture(scope="module")
def decided(tmp_path_factory):
    return run_tournament(**DECIDES, jobs=1, backend="sequential", out=tmp_path_factory.mktemp("u") / "seq")


def test_a_real_difference_stops_early_and_says_why(decided):
    man = read_manifest_json(decided.out)
    stop = man["stop"]
    assert decided.units < 400_000 and decided.units == sum(c["rounds"] for c in man["chunks"]
                                                            if c["state"] == "done")
    assert stop["pairs"][0]["status"] == "separated" and stop["pairs"][0]["lo"] > 0.5
    assert decided.stop.startswith("decided: greedy vs random") and "excludes 0.5" in decided.stop
    states = [c["state"] for c in man["chunks"]]
    assert states == ["done"] * stop["blocks"] + ["skipped"] * (len(states) - stop["blocks"])
    assert len(RunReader(decided.out).parts()) == stop["blocks"]            # nothing beyond the stop is kept
    assert decided.tally.count("pair", 0 * 2 + 1) == decided.units


@pytest.mark.parametrize("backend,jobs", [("loky", 2), ("dask", 2)])
def test_the_stop_does_not_depend_on_workers_or_backend(decided, tmp_path, backend, jobs):
    res = run_tournament(**DECIDES, jobs=jobs, backend=backend, out=tmp_path / backend)
    assert res.stop == decided.stop and res.units == decided.units
    got, want = _parts(res.out), _parts(decided.out)
    assert got.keys() == want.keys() and all(got[k].equals(want[k]) for k in want)
    assert read_manifest_json(res.out)["stop"] == read_manifest_json(decided.out)["stop"]


def test_the_stop_is_the_same_when_the_results_wait_for_the_writer(decided, tmp_path, monkeypatch):
    stored = []
    held = HeldWriter(monkeypatch, run_module, after=6, stored=stored)     # six results wait for the writer
    res = run_tournament(**DECIDES, jobs=1, out=tmp_path / "waited", on_chunk=stored.append)
    assert held.stored_before_release == [] and held.played[:6] == list(range(6))
    assert res.stop == decided.stop and res.units == decided.units and res.dropped_units == decided.dropped_units
    got, want = _parts(res.out), _parts(decided.out)
    assert got.keys() == want.keys() and all(got[k].equals(want[k]) for k in want)


def test_an_interrupted_run_resumes_to_the_same_stop(decided, tmp_path):
    out = tmp_path / "resume"

    def interrupt(index):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_tournament(**DECIDES, jobs=1, out=out, on_chunk=interrupt)
    assert "stop" not in read_manifest_json(out)
    res = run_tournament(**DECIDES, jobs=2, out=out)
    assert res.stop == decided.stop and res.units == decided.units and res.resumed_chunks == 1
    again = run_tournament(**DECIDES, jobs=2, out=out)              # finished: nothing more is played
    assert again.played_units == 0 and again.units == decided.units


def test_an_undecided_pair_runs_to_the_maximum(tmp_path):
    res = run_tournament(["random:1", "random:2"], players=2, rounds=6_000, chunk_size=2_000, seed=1,
                         until="decided", out=tmp_path / "aa", quiet=True, jobs=1)
    assert res.units == 6_000 and res.stop.startswith("maximum size reached; undecided: ")
    assert read_manifest_json(res.out)["stop"]["pairs"][0]["status"] == "open"


def test_precision_decides_a_pair_that_does_not_separate(tmp_path):
    res = run_tournament(["greedy", "greedy"], players=2, rounds=200_000, chunk_size=2_000, seed=1,
                         until="decided", precision="2pp", out=tmp_path / "prec", quiet=True, jobs=1)
    pair = read_manifest_json(res.out)["stop"]["pairs"][0]
    assert pair["status"] == "precise" and (pair["hi"] - pair["lo"]) / 2 <= 0.02
    assert res.units < 200_000 and "half-width" in res.stop


@pytest.mark.parametrize("argv,message", [
    (["--rounds", "1000", "--until", "decided"], "--max-rounds instead of --rounds"),
    (["--precision", "1pp"], "give them with --until decided"),
    (["--max-rounds", "1000"], "give it with --until decided"),
    (["--until", "forever"], "bad --until 'forever': expected decided"),
    (["--until", "decided", "--precision", "big"], "bad --precision 'big'"),
    (["--until", "decided", "--alpha", "2"], "bad --alpha 2"),
])
def test_bad_stopping_options_are_one_line(tmp_path, capsys, argv, message):
    code = root.main(["tournament", "--agents", "greedy,random", "--out", str(tmp_path / "x"), *argv])
    err = capsys.readouterr().err
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_the_command_prints_the_reason_on_its_final_line(tmp_path, capsys):
    out = tmp_path / "cli"
    assert root.main(["tournament", "--agents", "greedy,random", "--until", "decided", "--max-rounds", "400000",
                      "--chunk-size", "4000", "--seed", "3", "--jobs", "1", "--out", str(out)]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    final = next(x for x in lines if " in " in x and "results in" in x)
    assert "stopped: decided: greedy vs random" in final
    assert json.loads((out / "manifest.json").read_text())["config"]["until"]["until"] == "decided"
