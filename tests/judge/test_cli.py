"""``kc-sim analyse`` end to end, as a user runs it: records written by ``kc-sim record``,
the command in a fresh process, its JSON and its tables; a hostile file is one line, exit 2."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest


def kc_sim(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "kc_sim.cli", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, timeout=600)


@pytest.fixture(scope="module")
def records(tmp_path_factory):
    path = tmp_path_factory.mktemp("analyse") / "rounds.jsonl"
    r = kc_sim("record", "-o", path, "--agents", "greedy,random", "--rounds", "2", "--seed", "4")
    assert r.returncode == 0, r.stderr
    return path


def test_json_names_the_evaluator_and_judges_the_recorded_actions(records):
    r = kc_sim("analyse", records, "--evaluator", "greedy", "--budget", "32", "--json")
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    assert rep["format"] == "kc-sim/analysis/1" and rep["evaluator"] == "greedy" and rep["view"] == "seat"
    assert len(rep["rounds"]) == 2
    recs = [json.loads(line) for line in records.read_text().splitlines()]
    for rnd, rec in zip(rep["rounds"], recs):
        played = []
        for turn in rec["turns"]:
            played += turn["actions"]
            if turn is not rec["turns"][-1] or rec["result"]["end"] != "out":
                played.append("stop")
        assert [d["chosen"] for d in rnd["decisions"]] == played
        assert set(rnd["seats"]) == {"0", "1"}
        for d in rnd["decisions"]:
            assert d["worlds"] <= 32 and (d["loss"] == 0 if d["forced"] else True)
        assert len(rnd["luck"]["deal"]) == 2
    assert set(rep["seats"]) == {"0", "1"} and rep["seats"]["0"]["rounds"] == 2


def test_tables_name_the_evaluator_and_hindsight(records):
    r = kc_sim("analyse", records, "--round", "1", "--seat", "0", "--evaluator", "greedy", "--budget", "16",
               "--seen", "all", "--no-luck")
    assert r.returncode == 0, r.stderr
    said = " ".join(r.stdout.split())           # the header wraps at the console's width (a long path)
    assert "judged by greedy" in said and "HINDSIGHT" in said
    assert "record 1 (line 2)" in said and "error rate" in said


@pytest.mark.parametrize("content,expected", [
    ("this is not json\n", "not JSON"),
    ('{"format": "kc-sim/game/1"}\n', "missing field"),
    ("[" * 100000 + "\n", ""),
])
def test_a_hostile_file_is_one_line_and_exit_2(tmp_path, content, expected):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(content)
    r = kc_sim("analyse", bad, "--evaluator", "greedy")
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("kc-sim: error:") and expected in lines[0], r.stderr
    assert "Traceback" not in r.stderr and r.stdout == ""


def test_an_illegal_record_is_one_line_and_exit_2(records, tmp_path):
    rec = json.loads(records.read_text().splitlines()[0])
    rec["turns"][0]["actions"] = ["KS>N"] + rec["turns"][0]["actions"]
    bad = tmp_path / "illegal.jsonl"
    bad.write_text(json.dumps(rec) + "\n")
    r = kc_sim("analyse", bad, "--evaluator", "greedy")
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1 and "not a valid round" in lines[0] and "kc-sim check" in lines[0]


@pytest.mark.parametrize("args,expected", [
    (("--round", "7"), "--round 7"), (("--seat", "5"), "--seat 5"), (("--seen", "nobody"), "--seen"),
    (("--budget", "0"), "--budget"), (("--evaluator", "nosuch"), "nosuch"), (("--seed", "-1"), "--seed"),
])
def test_bad_options_are_one_line_and_exit_2(records, args, expected):
    r = kc_sim("analyse", records, *(args if "--evaluator" in args else ("--evaluator", "greedy", *args)))
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1 and expected in lines[0], r.stderr


def test_a_missing_file_is_one_line_and_exit_2(tmp_path):
    r = kc_sim("analyse", tmp_path / "missing.jsonl", "--evaluator", "greedy")
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1 and "no such file" in lines[0]

def test_the_command_says_what_it_does():
    r = kc_sim("--help")
    assert r.returncode == 0 and "analyse" in r.stdout and "Judge the decisions" in r.stdout
    r = kc_sim("analyse", "--help")
    assert r.returncode == 0 and "blunder from 12" in r.stdout and "planner" in r.stdout
