"""A run folder's integrity: the manifest records each part's size and sha256; a part with
bytes flipped, cut short, replaced by a copy of another part, or gone is named in one line
by every reader (exit 2), and a rerun of the same command plays it again so the data equal
an uninterrupted run's (parts byte for byte, the summary, recomputed with pandas). A
damaged or missing manifest is rebuilt from the parts that prove to be this run's, or
refused with the parts kept."""

from __future__ import annotations

import json
import shutil

import pandas as pd
import pytest

from kc_sim.analysis.scan import scan_run
from kc_sim.cli.root import main
from kc_sim.errors import UserError
from kc_sim.runs import RunReader, layout, read_rounds, read_summary
from kc_sim.tournament.run import run_tournament

RUN = dict(agents=["greedy", "merger", "random", "king-first"], players=3, rounds=9600, chunk_size=1200, seed=5,
           quiet=True, jobs=1)


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """An uninterrupted run: what every repaired folder must equal."""
    out = tmp_path_factory.mktemp("ref") / "run"
    run_tournament(**RUN, out=out)
    return out


@pytest.fixture
def copy(reference, tmp_path):
    out = tmp_path / "run"
    shutil.copytree(reference, out)
    return out


def _flip(p):
    b = bytearray(p.read_bytes())
    for i in range(len(b) // 2, len(b) // 2 + 16):
        b[i] ^= 0xFF
    p.write_bytes(bytes(b))


def _truncate(p):
    p.write_bytes(p.read_bytes()[: p.stat().st_size // 2])


def _swap(p):
    shutil.copyfile(p.with_name(layout.part_name(1)), p)


DAMAGE = {"flipped": _flip, "truncated": _truncate, "swapped": _swap, "gone": lambda p: p.unlink()}


def _readers_refuse(run, capsys, *words) -> None:
    """Every reader of the folder stops in one line naming what is wrong (exit 2)."""
    for argv in (["leaderboard", run], ["power", run], ["plot", run], ["report", run]):
        assert main([str(a) for a in argv]) == 2, argv
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("kc-sim: error: ") and all(w in err[0] for w in words), err
    for read in (read_rounds, lambda d: RunReader(d).tally(["a"], 3), scan_run):
        with pytest.raises(UserError) as e:
            read(run)
        assert all(w in str(e.value) for w in words) and "\n" not in str(e.value)


def _equal(run, reference) -> None:
    """The same parts (byte for byte), rounds and summary as the uninterrupted run, and
    the summary recomputed from the rows with pandas."""
    assert [p.read_bytes() for p in RunReader(run).parts()] == [p.read_bytes() for p in RunReader(reference).parts()]
    pd.testing.assert_frame_equal(read_rounds(run), read_rounds(reference))
    summary = read_summary(run)
    pd.testing.assert_frame_equal(summary, read_summary(reference))
    df = read_rounds(run)
    for name, row in summary[summary["opponent"].isna()].set_index("agent").iterrows():
        seats = [df[f"agent_{s}"].astype(str) == name for s in range(3)]
        wins = sum(((df["winner"] == s) & seats[s]).sum() for s in range(3))
        assert int(row["rounds"]) == sum(int(x.sum()) for x in seats)
        assert row["win_rate"] == pytest.approx(wins / row["rounds"])
    assert json.loads((run / layout.MANIFEST_FILE).read_text())["finished"]


@pytest.mark.parametrize("damage", DAMAGE)
def test_a_damaged_part_is_named_by_readers_and_replayed_by_a_rerun(damage, copy, reference, capsys):
    part = copy / layout.ROUNDS / layout.part_name(3)
    DAMAGE[damage](part)
    _readers_refuse(copy, capsys, "rounds/part-00003.parquet", "missing" if damage == "gone" else "damaged",
                    "rerun the run's")
    res = run_tournament(**RUN, out=copy)
    assert res.played_chunks == 1 and res.resumed_chunks == len(RunReader(reference).parts()) - 1
    if damage != "gone":
        assert "rounds/part-00003.parquet is damaged" in capsys.readouterr().err       # said before it is played
    _equal(copy, reference)


def test_a_damaged_summary_is_named_and_written_again(copy, reference, capsys):
    _flip(copy / layout.SUMMARY_FILE)
    with pytest.raises(UserError, match="summary.parquet is damaged"):
        read_summary(copy)
    run_tournament(**RUN, out=copy)
    _equal(copy, reference)


def test_a_foreign_part_in_a_finished_run_is_named(copy, reference, capsys):
    shutil.copyfile(copy / layout.ROUNDS / layout.part_name(0), copy / layout.ROUNDS / layout.part_name(99))
    _readers_refuse(copy, capsys, "rounds/part-00099.parquet is not part of this run")


@pytest.mark.parametrize("how", ["garbage", "cut", "not-a-manifest", "nested", "gone"])
def test_a_damaged_manifest_is_refused_by_readers_and_rebuilt_by_a_rerun(how, copy, reference, capsys):
    path = copy / layout.MANIFEST_FILE
    text = path.read_text()
    {"garbage": lambda: path.write_bytes(b"\x00\xff{{{"), "cut": lambda: path.write_text(text[: len(text) // 2]),
     "not-a-manifest": lambda: path.write_text("[1, 2, 3]"),
     "nested": lambda: path.write_text("[" * 100_000 + "]" * 100_000), "gone": path.unlink}[how]()
    _readers_refuse(copy, capsys, "manifest.json" if how == "gone" else "manifest.json is damaged")
    _flip(copy / layout.ROUNDS / layout.part_name(2))            # and a part damaged meanwhile: found by its checksums
    res = run_tournament(**RUN, out=copy)
    err = capsys.readouterr().err
    assert "rebuilt from the parts" in err and "rounds/part-00002.parquet damaged, played again" in err, err
    assert res.played_chunks == 1
    _equal(copy, reference)


def test_a_damaged_manifest_beside_another_runs_parts_is_refused_and_the_parts_kept(copy):
    (copy / layout.MANIFEST_FILE).write_text("{")
    before = {p.name: p.read_bytes() for p in layout.parts_on_disk(copy)}
    with pytest.raises(UserError, match=r"manifest.json is damaged or missing, and rounds/part-00000.parquet.* do not "
                                        r"say they belong to this run .* the parts are kept"):
        run_tournament(**{**RUN, "seed": 6}, out=copy)
    assert {p.name: p.read_bytes() for p in layout.parts_on_disk(copy)} == before


def test_a_copied_run_folder_is_told_to_rerun_into_itself(tmp_path, capsys):
    """The advice names the folder read: the run's command with its --out, not the folder
    the run was made in (which may hold a good copy, or nothing)."""
    made = tmp_path / "made"
    args = ["tournament", "--agents", "greedy,random", "--rounds", "2400", "--chunk-size", "1200", "--jobs", "1",
            "--quiet"]
    assert main([*args, "--out", str(made)]) == 0
    moved = tmp_path / "moved here"
    shutil.copytree(made, moved)
    _flip(moved / layout.ROUNDS / layout.part_name(1))
    capsys.readouterr()
    assert main(["leaderboard", str(moved)]) == 2
    err = capsys.readouterr().err
    assert f"--out '{moved}'" in err and str(made) + " " not in err, err
