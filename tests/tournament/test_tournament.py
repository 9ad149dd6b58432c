"""Tests of tournaments: schedule, identical output for every --jobs, resume, refusals,
the summary against a recomputation with pandas, matches, records and bad input."""

from __future__ import annotations

import errno
import itertools
import json
import os
import threading

import numpy as np
import pandas as pd
import pytest
import typer
from typer.testing import CliRunner

from kc_sim.cli.tournament import bench_agent, tournament
from kc_sim.errors import UserError
from kc_sim.play.agents.registry import builtin_agents
from kc_sim.play.driver.runner import AgentFault
from kc_sim.runs import RunReader, layout, read_matches, read_rounds, read_summary
from kc_sim.runs.manifest import read_manifest_json
from kc_sim.runs.parts import write_json
from kc_sim.runs.schema import TALLY_KEY
from kc_sim.tournament import run as run_module
from kc_sim.tournament.run import run_tournament
from kc_sim.tournament.schedule import (
    group_seeds,
    make_schedule,
    rotations,
    seat_lineup,
)
from tests.helpers.intervals import clustered
from tests.helpers.storing import HeldWriter


def _three_agents() -> list[str]:
    """Three different built-ins when they exist, else copies of random."""
    known = builtin_agents()
    names = [n for n in ("greedy", "merger", "random") if n in known]
    return (names + ["random"] * 3)[:3]


AGENTS = _three_agents()
SMALL = dict(agents=AGENTS, players=2, rounds=3000, chunk_size=500, quiet=True)


@pytest.fixture(scope="module")
def reference_run(tmp_path_factory):
    """A small run played in this process: the reference the other runs must equal."""
    out = tmp_path_factory.mktemp("ref") / "run"
    res = run_tournament(**SMALL, jobs=1, out=out)
    return res


# --- the schedule ------------------------------------------------------------------

def test_schedule_lineups_seatings_and_chunks():
    s = make_schedule(4, 2, 1000, 100)
    assert s.lineups == tuple(itertools.combinations(range(4), 2))
    assert s.groups == 84 and s.units == 6 * 84 * 2 >= 1000       # rounded up to whole groups
    chunks = s.chunks()
    assert [c.index for c in chunks] == list(range(len(chunks)))
    for li in range(len(s.lineups)):                               # every group exactly once
        mine = [c for c in chunks if c.lineup == li]
        assert sum(c.groups for c in mine) == s.groups and mine[0].start == 0 and mine[-1].stop == s.groups
    # block by block: chunk i is line-up i % L of block i // L
    assert [(c.lineup, c.start) for c in chunks[:7]] == [(li, 0) for li in range(6)] + [(0, 50)]
    lineup = (5, 7, 9)
    seats = [seat_lineup(lineup, q) for q in rotations(3)]
    assert seats[0] == (5, 7, 9) and seats[1] == (9, 5, 7)
    for agent in lineup:                                          # each agent once in each seat
        assert sorted(seat.index(agent) for seat in seats) == [0, 1, 2]
    three = make_schedule(3, 3, 600, 120)
    assert len(three.seatings) == 6 and three.groups == 100 and three.chunk_groups == 20


def test_group_seeds_do_not_depend_on_the_cut():
    whole = group_seeds(7, 0, 100)
    parts = np.concatenate([group_seeds(7, a, min(a + 30, 100)) for a in range(0, 100, 30)])
    assert (whole == parts).all() and len(set(whole)) == 100 and (whole >= 0).all()


# --- runs --------------------------------------------------------------------------

def test_duplicate_deals_in_the_output(reference_run):
    df = read_rounds(reference_run.out)
    assert len(df) == reference_run.units == 3 * 2 * 500
    g = df.groupby(["lineup", "group"])
    assert (g["seed"].nunique() == 1).all() and (g["dealer"].nunique() == 1).all()
    assert (g["seating"].nunique() == 2).all()
    # group g has the same deal in every line-up
    assert (df.groupby("group")["seed"].nunique() == 1).all()
    # within a deal each agent of the line-up sits in each seat once
    for (lu, grp), rows in itertools.islice(g, 20):
        assert set(rows["agent_0"].astype(str)) == set(rows["agent_1"].astype(str))
    assert df["winner"].isna().sum() == (df["end"] == "blocked").sum()


def test_two_workers_give_the_same_rounds(reference_run, tmp_path):
    res = run_tournament(**SMALL, jobs=2, out=tmp_path / "run")
    pd.testing.assert_frame_equal(read_rounds(res.out), read_rounds(reference_run.out))
    pd.testing.assert_frame_equal(read_summary(res.out), read_summary(reference_run.out))


def test_interrupted_run_resumes_to_the_same_result(reference_run, tmp_path):
    out = tmp_path / "run"
    seen = []

    def stop_after_two(index):
        seen.append(index)
        if len(seen) == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_tournament(**SMALL, jobs=1, out=out, on_chunk=stop_after_two)
    manifest = read_manifest_json(out)
    assert [c["state"] for c in manifest["chunks"]].count("done") == 2
    assert len(RunReader(out).parts()) == 2 and not manifest["finished"]
    (out / layout.ROUNDS / ".part-00005.parquet.tmp").write_bytes(b"half a part")   # a crash mid-write
    res = run_tournament(**SMALL, jobs=2, out=out)
    assert res.resumed_chunks == 2 and res.played_chunks == len(manifest["chunks"]) - 2
    pd.testing.assert_frame_equal(read_rounds(out), read_rounds(reference_run.out))
    pd.testing.assert_frame_equal(read_summary(out), read_summary(reference_run.out))
    assert not list(out.rglob("*.tmp"))
    # a part listed done but gone is played again; nothing is counted twice
    (out / layout.ROUNDS / layout.part_name(3)).unlink()
    res = run_tournament(**SMALL, jobs=1, out=out)
    assert res.played_chunks == 1
    pd.testing.assert_frame_equal(read_rounds(out), read_rounds(reference_run.out))
    assert read_manifest_json(out)["finished"]


def test_results_that_wait_for_the_writer_are_all_stored_in_order(reference_run, tmp_path, monkeypatch):
    stored = []
    held = HeldWriter(monkeypatch, run_module, after=3, stored=stored)
    res = run_tournament(**SMALL, jobs=1, out=tmp_path / "run", on_chunk=stored.append)
    assert held.stored_before_release == [] and len(held.played) > 3        # three results waited
    assert stored == sorted(stored) and len(stored) == res.played_chunks == len(read_manifest_json(res.out)["chunks"])
    pd.testing.assert_frame_equal(read_rounds(res.out), read_rounds(reference_run.out))
    pd.testing.assert_frame_equal(read_summary(res.out), read_summary(reference_run.out))


def test_chunks_waiting_for_the_writer_are_kept_on_ctrl_c(reference_run, tmp_path, monkeypatch):
    stored = []
    held = HeldWriter(monkeypatch, run_module, fail_at=3, stored=stored)      # Ctrl-C during the third chunk
    out = tmp_path / "run"
    with pytest.raises(KeyboardInterrupt, match="interrupted with 2 of"):
        run_tournament(**SMALL, jobs=1, out=out, on_chunk=stored.append)
    assert held.stored_before_release == [] and held.played == [0, 1]       # both waited for the writer
    manifest = read_manifest_json(out)
    assert [i for i, c in enumerate(manifest["chunks"]) if c["state"] == "done"] == held.played == stored
    assert not any(t.name == "kc-sim-writer" for t in threading.enumerate())
    monkeypatch.undo()
    run_tournament(**SMALL, jobs=1, out=out)
    pd.testing.assert_frame_equal(read_rounds(out), read_rounds(reference_run.out))


def test_ctrl_c_while_the_last_results_wait_for_the_writer_keeps_them(reference_run, tmp_path, monkeypatch):
    from kc_sim.tournament.options import TournamentOptions
    from kc_sim.tournament.plan import make_plan
    from kc_sim.tournament.storing import ChunkWriter

    n_chunks = len(make_plan(TournamentOptions.create(**SMALL, out=tmp_path)).schedule.chunks())
    stored = []
    held = HeldWriter(monkeypatch, run_module, after=n_chunks, stored=stored)   # every result waits to the end
    finish, calls = ChunkWriter.finish, []

    def interrupted_once(writer):          # Ctrl-C as the run starts waiting for the writer
        calls.append(1)
        if len(calls) == 1:
            raise KeyboardInterrupt
        finish(writer)

    monkeypatch.setattr(ChunkWriter, "finish", interrupted_once)
    out = tmp_path / "run"
    with pytest.raises(KeyboardInterrupt, match=f"interrupted with {n_chunks} of {n_chunks} chunks done"):
        run_tournament(**SMALL, jobs=1, out=out, on_chunk=stored.append)
    assert held.stored_before_release == [] and stored == held.played == list(range(n_chunks))
    monkeypatch.undo()
    res = run_tournament(**SMALL, jobs=1, out=out)
    assert res.played_chunks == 0
    pd.testing.assert_frame_equal(read_rounds(out), read_rounds(reference_run.out))


def test_a_write_error_in_the_writer_thread_ends_the_run_with_that_error(tmp_path, monkeypatch):
    from kc_sim.runs import RunFolder

    store, calls = RunFolder.store, []

    def second_fails(folder, index, *args):
        calls.append(index)
        if len(calls) == 2:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(folder.part_path(layout.ROUNDS, index)))
        store(folder, index, *args)

    monkeypatch.setattr(RunFolder, "store", second_fails)
    out = tmp_path / "run"
    with pytest.raises(OSError) as e:
        run_tournament(**SMALL, jobs=1, out=out)
    assert e.value.errno == errno.ENOSPC and str(out) in e.value.filename
    assert [c["state"] for c in read_manifest_json(out)["chunks"]].count("done") == 1 and len(calls) == 2
    assert not any(t.name == "kc-sim-writer" for t in threading.enumerate())


def test_a_different_configuration_is_refused(reference_run, tmp_path):
    with pytest.raises(UserError, match=r"holds a different run \(seed 1 here but 0 there\)"):
        run_tournament(**SMALL, jobs=1, seed=1, out=reference_run.out)
    with pytest.raises(UserError, match="holds a different run"):
        run_tournament(**{**SMALL, "rounds": 4000}, jobs=1, out=reference_run.out)
    other = tmp_path / "notes"
    other.mkdir()
    (other / "todo.txt").write_text("mine")
    with pytest.raises(UserError, match="is not a tournament folder"):
        run_tournament(**SMALL, jobs=1, out=other)


def test_summary_recomputed_from_rounds_with_pandas(reference_run):
    df = read_rounds(reference_run.out)
    long = pd.concat([
        pd.DataFrame({"agent": df[f"agent_{s}"].astype(str), "position": (s - df["first"].astype(int)) % 2,
                      "penalty": df[f"penalty_{s}"].astype(float),
                      "won": (df["winner"] == s).fillna(False).astype(int)})
        for s in range(2)])
    long["group"] = np.tile(df["group"].to_numpy(), 2)
    expect = long.groupby("agent").agg(rounds=("penalty", "size"), wins=("won", "sum"),
                                       mean_penalty=("penalty", "mean"))
    by_position = long.groupby(["agent", "position"])["won"].mean().unstack()
    summary = read_summary(reference_run.out)
    rows = summary[summary["opponent"].isna()].set_index("agent")
    assert set(rows.index) == set(reference_run.plan.labels)
    for agent, e in expect.iterrows():
        r = rows.loc[agent]
        assert r["rounds"] == e["rounds"] and r["wins"] == e["wins"]
        assert r["win_rate"] == pytest.approx(e["wins"] / e["rounds"])
        assert r["mean_penalty"] == pytest.approx(e["mean_penalty"])
        # clustered by deal (tests/helpers/intervals.py: per-deal sums, CR1, Student's t, Hall)
        mine = long[long["agent"] == agent]
        assert (r["penalty_lo"], r["penalty_hi"]) == pytest.approx(clustered(mine["penalty"], mine["group"])[1:])
        assert r["win_lo"] < r["win_rate"] < r["win_hi"]
        for p in range(2):                   # position in turn order, 0 plays first (column _pos_1)
            assert r[f"win_rate_pos_{p + 1}"] == pytest.approx(by_position.loc[agent, p])
    # head to head (three agents): mean penalty difference over the rounds where both sat
    pairs = summary[summary["opponent"].notna()]
    assert len(pairs) == 6
    a, b = reference_run.plan.labels[:2]
    both = df[(df["agent_0"].astype(str).isin([a, b])) & (df["agent_1"].astype(str).isin([a, b]))]
    pa_ = np.where(both["agent_0"].astype(str) == a, both["penalty_0"], both["penalty_1"]).astype(float)
    pb_ = np.where(both["agent_0"].astype(str) == a, both["penalty_1"], both["penalty_0"]).astype(float)
    row = pairs[(pairs["agent"] == a) & (pairs["opponent"] == b)].iloc[0]
    assert row["rounds"] == len(both) and row["penalty_diff"] == pytest.approx((pa_ - pb_).mean())
    assert row["beats"] == (pa_ < pb_).sum()


@pytest.mark.parametrize("mode", ["rounds", "matches"])
def test_tallies_from_the_workers_equal_a_tally_of_the_rows(mode, tmp_path):
    """Each worker stores its chunk's tally in the part's metadata and the summary adds them
    up; it equals the tally computed from the rows, which is also what a part without one
    (written by an older kc-sim) falls back to."""
    import pyarrow.parquet as pq

    from kc_sim.stats import Tally

    size = dict(rounds=1200) if mode == "rounds" else dict(matches=60, rules="match=rounds:3")
    out = tmp_path / "run"
    res = run_tournament(AGENTS, players=2, chunk_size=200 if mode == "rounds" else 20, jobs=1, out=out,
                         quiet=True, **size)
    names = res.plan.labels
    n_deals = res.plan.schedule.groups
    direct = Tally.for_deals(len(names), 2, n_deals)
    for part, (codes, pen, winner) in zip(RunReader(out).parts(), RunReader(out).codes(names=names)):
        t = pq.read_table(part, columns=["group", "lineup", "first"])
        direct.add_rounds(t.column("group").to_numpy(), codes, pen, winner, t.column("first").to_numpy(),
                          count_deals=t.column("lineup")[0].as_py() == 0)
    if mode == "matches":
        for part, (codes, total, winners) in zip(RunReader(out).parts(layout.MATCHES),
                                                 RunReader(out).codes(layout.MATCHES, "total_", names=names)):
            t = pq.read_table(part, columns=["group", "lineup"])
            direct.add_matches(t.column("group").to_numpy(), codes, total, winners,
                               count_deals=t.column("lineup")[0].as_py() == 0)

    def same(got, want):
        assert (got.deals, got.match_deals, got.width) == (want.deals, want.match_deals, want.width)
        assert got.deals == n_deals
        for name, s in want.sums.items():
            g = got.sums[name]
            nb = max(g.n_batches, s.n_batches)
            for a, b in [(g.N, s.N)] + [(g.S[v], s.S[v]) for v in s.values]:
                assert np.array_equal(np.pad(a, ((0, 0), (0, nb - a.shape[1]))),
                                      np.pad(b, ((0, 0), (0, nb - b.shape[1])))), name

    for got in (res.tally, RunReader(out).tally(names, 2)[0]):
        same(got, direct)
    # strip the stored tallies from two parts (and damage a third), as an older kc-sim wrote
    # them (and their hashes from the manifest, which it did not record either): the fallback
    # tallies their rows
    manifest, ps = read_manifest_json(out), RunReader(out).parts()
    for p, entry in zip(ps[:2], manifest["chunks"]):
        t = pq.read_table(p)
        assert TALLY_KEY.encode() in t.schema.metadata
        pq.write_table(t.replace_schema_metadata({}), p)
        del entry["parts"]
    t = pq.read_table(ps[2])
    pq.write_table(t.replace_schema_metadata({TALLY_KEY: '{"format": 2, "sums": 7}'}), ps[2])
    del manifest["chunks"][2]["parts"]
    write_json(manifest, out / layout.MANIFEST_FILE)
    mixed, n = RunReader(out).tally(names, 2)
    assert n == res.rounds
    same(mixed, direct)


def test_matches_and_records(tmp_path):
    from kc_sim.records.check import check_file

    out = tmp_path / "m"
    res = run_tournament(AGENTS[:2], matches=60, rules="match=rounds:3", chunk_size=20, jobs=1,
                         out=out, records=3, quiet=True)
    matches = read_matches(out)
    rounds = read_rounds(out)
    assert len(matches) == res.units == 60 and len(rounds) == 180 and res.rounds == 180
    per_match = rounds.groupby("match")["match_round"].agg(list)
    assert list(per_match.index) == list(range(60)) and all(list(x) == [0, 1, 2] for x in per_match)
    totals = rounds.groupby("match")[["penalty_0", "penalty_1"]].sum()
    m = matches.set_index("match")
    assert (totals["penalty_0"].to_numpy() == m["total_0"].to_numpy()).all()
    best = np.minimum(m["total_0"], m["total_1"])
    assert ((m["total_0"] == best) == m["win_0"]).all()
    summary = read_summary(out)
    assert summary["matches"].sum() == 120 and "match_win_rate" in summary
    # the first round of both seatings of the first deal are recorded, and they check out
    n, problems = check_file(out / layout.RECORDS_FILE)
    assert n == 3 and not problems
    recs = [json.loads(x) for x in (out / layout.RECORDS_FILE).read_text().splitlines()]
    assert recs[0]["seed"] == int(rounds["seed"].iloc[0]) and recs[0]["players"] == [
        str(rounds["agent_0"].iloc[0]), str(rounds["agent_1"].iloc[0])]


# --- the command line ----------------------------------------------------------------

def _app() -> typer.Typer:
    app = typer.Typer()
    app.command("tournament")(tournament)
    app.command("bench-agent")(bench_agent)
    return app


@pytest.mark.parametrize("args, message", [
    (["--agents", "random,no-such-agent"], "unknown agent 'no-such-agent'"),
    (["--agents", "random,random", "--players", "5"], "bad player count 5"),
    (["--agents", "random,random", "--rules", "draw=sometimes"], "bad rule value draw='sometimes'"),
    (["--agents", "random"], "at least 2 agents"),
    (["--agents", "random,random", "--backend", "spark"], "unknown backend 'spark'"),
    (["--agents", "random,random", "--rounds", "10", "--matches", "5"], "not both"),
])
def test_bad_input_is_one_clear_line(args, message, tmp_path):
    result = CliRunner().invoke(_app(), ["tournament", *args, "--out", str(tmp_path / "x")])
    assert isinstance(result.exception, UserError), result.output
    assert message in str(result.exception) and "\n" not in str(result.exception)


def test_unwritable_folder(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    result = CliRunner().invoke(_app(), ["tournament", "--agents", "random,random", "--rounds", "10",
                                         "--out", str(blocker / "run")])
    assert isinstance(result.exception, UserError)
    assert str(result.exception).startswith(f"cannot write to {blocker / 'run'}")


def test_bad_input_exits_2_through_kc_sim_main(tmp_path, capsys):
    from kc_sim.cli import root as cli

    if "tournament" not in [c.name or c.callback.__name__ for c in cli.app.registered_commands]:
        pytest.skip("kc_sim.cli does not register the tournament command")
    code = cli.main(["tournament", "--agents", "random,random", "--players", "5", "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "bad player count 5" in err


def test_tournament_command_prints_table_and_files(tmp_path):
    out = tmp_path / "cli"
    result = CliRunner().invoke(_app(), ["tournament", "--agents", "random,random", "--rounds", "400",
                                         "--jobs", "1", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "win rate [95% CI]" in result.output and "400 rounds in" in result.output
    assert str(out / "summary.parquet") in result.output
    manifest = read_manifest_json(out)
    assert manifest["command"] == f"kc-sim tournament --agents random,random --rounds 400 --rules classic " \
        f"--seed 0 --jobs 1 --out {out}"
    assert "numba" in manifest["versions"]
    assert all(c["state"] == "done" for c in manifest["chunks"])


def test_bench_agent_against_baselines(tmp_path):
    baselines = ",".join(AGENTS[1:])
    result = CliRunner().invoke(_app(), ["bench-agent", AGENTS[0], "--baselines", baselines, "--rounds", "600",
                                         "--jobs", "1", "--out", str(tmp_path / "b"), "--quiet"])
    assert result.exit_code == 0, result.output
    assert "penalty diff" in result.output
    df = read_rounds(tmp_path / "b")
    assert len(df) == 1200 and set(df["lineup"]) == {0, 1}
    first = builtin_agents()[AGENTS[0]].name
    assert ((df["agent_0"].astype(str) == first) | (df["agent_1"].astype(str) == first)).all()
    # its win rate by position in turn order over all baselines, recomputed from the rows
    mine = [pd.DataFrame({"pos": (s - df["first"].astype(int)) % 2, "won": (df["winner"] == s).fillna(False)})
            [df[f"agent_{s}"].astype(str) == first] for s in range(2)]
    rate = pd.concat(mine).groupby("pos")["won"].mean()
    line = next(x for x in result.output.splitlines() if "by position in turn order, over all baselines" in x)
    assert f"1st {100 * rate[0]:.1f}% [" in line and f"2nd {100 * rate[1]:.1f}% [" in line, line


def test_bench_agent_says_when_a_baseline_played_identically(tmp_path):
    result = CliRunner().invoke(_app(), ["bench-agent", "king-first", "--baselines", "greedy,random", "--rounds",
                                         "600", "--jobs", "1", "--quiet"])
    assert result.exit_code == 0, result.output
    assert "king-first and greedy played identically: level in every deal" in result.output
    assert "and random played identically" not in result.output


def test_an_agent_playing_an_illegal_action_stops_the_run(tmp_path):
    bad = tmp_path / "bad_agent.py"
    bad.write_text(
        "from kc_sim.core.policy import compiled_policy\n\n"
        "@compiled_policy\n"
        "def always_zero(st, seat, mem):\n"
        "    return 0\n")
    with pytest.raises(UserError, match=r"always_zero.*illegal action AC>N") as err:
        run_tournament([f"{bad}:always_zero", "random"], rounds=40, chunk_size=10, jobs=2,
                       out=tmp_path / "run", quiet=True)
    assert "\n" not in str(err.value)
    assert isinstance(err.value, AgentFault) and err.value.action == "AC>N"   # crossed from a worker intact
    assert err.value.path.exists() and err.value.path.parent == tmp_path / "run" / "faults"
