"""The first commands as a user runs them: record, check, bench, and bad input."""

import json
import subprocess
import sys

import pytest

from kc_sim.cli import main
from tests.helpers.differential import rule_sets


def kc_sim(*args):
    """Run the real command in a fresh process."""
    return subprocess.run([sys.executable, "-m", "kc_sim.cli", *args], capture_output=True, text=True)


@pytest.mark.parametrize("rules", rule_sets()[::5], ids=lambda r: r.spec().rsplit(",match", 1)[0])
def test_record_then_check_every_variant(rules, tmp_path, capsys):
    out = tmp_path / "r.jsonl"
    players = rules.max_players if rules.decks == 2 else 3
    assert main(["record", "--players", str(players), "--rounds", "30", "--seed", "5",
                 "--rules", rules.spec(), "-o", str(out)]) == 0
    lines = out.read_text().splitlines()
    assert len(lines) == 30 and json.loads(lines[0])["rules"] == rules.round_dict()
    assert main(["check", str(out)]) == 0
    assert "30 records checked: 30 valid, 0 invalid" in capsys.readouterr().out


def test_check_reports_an_illegal_action_and_exits_1(tmp_path):
    out = tmp_path / "r.jsonl"
    assert main(["record", "--players", "2", "--rounds", "3", "-o", str(out)]) == 0
    recs = [json.loads(x) for x in out.read_text().splitlines()]
    turn = next(t for t in recs[1]["turns"] if t["actions"])
    turn["actions"][0] = "KS>NE" if turn["actions"][0] != "KS>NE" else "QS>NE"
    out.write_text("\n".join(json.dumps(r) for r in recs) + "\n")
    r = kc_sim("check", str(out))
    assert r.returncode == 1
    assert "record 1" in r.stdout and "legal:" in r.stdout and "3 records checked: 2 valid, 1 invalid" in r.stdout


@pytest.mark.parametrize("args,needle", [
    (["record", "-o", "x.jsonl", "--rules", "classic,colour=red"], "unknown rule switch 'colour'"),
    (["record", "-o", "x.jsonl", "--rules", "draw=later"], "expected one of end, start, if_stuck"),
    (["record", "-o", "x.jsonl", "--players", "5"], "bad player count 5"),
    (["record", "-o", "x.jsonl", "--players", "9", "--rules", "decks=2"], "2 to 8 players"),
    (["record", "-o", "x.jsonl", "--rounds", "many"], "Invalid value for '--rounds'"),
    (["check", "missing.jsonl"], "no such file"),
    (["record", "-o", "x.jsonl", "--agents", "greedy,,random", "--players", "3"], "name 2 of 3 is empty"),
    (["play", "--agents", "human,greedy,", "--seed", "1"], "name 3 of 3 is empty"),
    (["frobnicate"], "No such command"),
    (["tournament", "--agents", "greedy,merger,random", "--players", "4"],
     "needs at least 4 agents, got 3: name an agent more than once to seat copies of it "
     "(--agents greedy,merger,random,greedy)"),
])
def test_bad_input_is_one_line_and_exit_2(args, needle, tmp_path):
    """A typical mistake: one line on stderr saying what was wrong and what would be right."""
    r = subprocess.run([sys.executable, "-m", "kc_sim.cli", *args], capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 2
    assert needle in r.stderr and len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr


@pytest.mark.parametrize("content,needle", [
    ('{"format": "kc-sim/game/1", "seed": 1\n', "not JSON"),
    ('{"format": "kc-sim/game/1", "seed": 1}\n', "missing field"),
])
def test_bad_record_files_exit_2(content, needle, tmp_path):
    f = tmp_path / "bad.jsonl"
    f.write_text(content)
    r = kc_sim("check", str(f))
    assert r.returncode == 2 and needle in r.stderr and "Traceback" not in r.stderr


def test_bad_card_text_in_a_record_exit_2(tmp_path):
    out = tmp_path / "r.jsonl"
    assert main(["record", "--rounds", "1", "-o", str(out)]) == 0
    rec = json.loads(out.read_text())
    rec["hands"][0][0] = "1X"
    out.write_text(json.dumps(rec) + "\n")
    r = kc_sim("check", str(out))
    assert r.returncode == 2 and "bad card '1X'" in r.stderr


def test_bench_json_has_the_figures():
    r = kc_sim("bench", "--json", "--rounds", "2000", "--seconds", "0.2")
    assert r.returncode == 0, r.stderr
    figures = json.loads(r.stdout)
    assert figures["core_rounds_per_s"] > 0 and figures["reference_rounds_per_s"] > 0
    assert figures["core_vs_reference"] == pytest.approx(
        figures["core_rounds_per_s"] / figures["reference_rounds_per_s"], rel=0.01)
    # the machine's steadiness: a probe at the start, after the loops and at the end
    assert 0 < figures["machine_probe_ms_min"] <= figures["machine_probe_ms"] <= figures["machine_probe_ms_max"]
    assert figures["machine_probe_spread"] == pytest.approx(
        figures["machine_probe_ms_max"] / figures["machine_probe_ms_min"], abs=0.01)


def test_agents_lists_every_builtin_one_line_each(capsys):
    from kc_sim.play.agents.registry import builtin_names

    assert main(["agents"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert [line.split()[0] for line in lines[:-3]] == builtin_names()
    assert any(line.startswith("pile-merger (alias merger)") for line in lines)
    # then the names loaders make, without importing them
    assert [line.split()[0] for line in lines[-3:]] == ["net:PATH.zip", "openspiel:ismcts[:N]", "sb3:PATH.zip"]


def test_the_leaderboard_command_bootstraps_as_the_statistics_do_by_default():
    """--bootstrap's default is written in kc_sim.cli.leaderboard (its home, kc_sim.stats.ratings,
    imports pandas, which kc-sim --help must not): the two stay equal."""
    from kc_sim.cli.leaderboard import BOOTSTRAP
    from kc_sim.stats.ratings import DEFAULT_BOOTSTRAP

    assert BOOTSTRAP == DEFAULT_BOOTSTRAP


def test_version_is_the_package_version():
    """``kc-sim --version`` prints the one version, kc_sim.__version__ (pyproject.toml reads it
    from there), as the installed package's metadata has it."""
    from importlib.metadata import version

    import kc_sim

    r = subprocess.run([sys.executable, "-m", "kc_sim.cli", "--version"], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.strip() == f"kc-sim {kc_sim.__version__}" == f"kc-sim {version('kc-sim')}"


@pytest.mark.parametrize("command", ["report", "plot", "leaderboard"])
def test_an_empty_folder_is_named_alike_by_every_reader(command, tmp_path):
    """report, plot and leaderboard answer "is this a run folder?" in one place
    (RunReader.open), so an empty folder and a missing one get the same line from each."""
    (tmp_path / "empty").mkdir()
    for folder, needle in (("empty", "empty is not a run folder: it has no manifest.json (make one with kc-sim "
                                     "tournament --out DIR)"),
                           ("gone", "run folder gone does not exist (make one with kc-sim tournament --out gone)")):
        r = subprocess.run([sys.executable, "-m", "kc_sim.cli", command, folder], capture_output=True, text=True,
                           cwd=tmp_path)
        assert r.returncode == 2 and r.stderr.strip() == f"kc-sim: error: {needle}", r.stderr
