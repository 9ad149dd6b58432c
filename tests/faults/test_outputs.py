"""Every command's errors are one line (exit 2, no traceback), run as real ``kc-sim``
processes: an output that cannot be written (a path under a file, a read-only folder, a
full disk, a disk that fills up while the command writes, stdout on a full device) and a
malformed input (an agent whose constructor raises, a record nested 100,000 deep, a run
folder whose manifest is not JSON or whose part is damaged, a broken experiment file, bad
options).

The first three are refused before any work (kc_sim.cli.root.check_output); a disk that
fills up during the command, and /dev/full, go through the write that fails. The
read-only folder and the disks are small tmpfs mounts (read-only, filled to the last byte,
or of 32 kB) when this process may mount (root); a non-root user gets a folder without
write permission instead, and the disks are skipped, saying so."""

from __future__ import annotations

import errno
import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from tests.faults.hostile import KC, kc, mount_tmpfs, one_line_error, unmount

RAISING_AGENT = '''
from kc_sim.play.agents.interface import PythonAgent


class Boom(PythonAgent):
    def __init__(self, seed: int = 0):
        raise RuntimeError("boom in __init__")

    def act(self, obs):
        return obs.legal[0]
'''

EXPERIMENT = '''
name = "tiny"
question = "Does the seat matter in a tiny run?"
seed = 1

[compare]
kind = "seats"

[defaults]
agents = "greedy"
rounds = 400
seating = "rotations"

[[runs]]
name = "two"
players = 2
rules = "classic"
'''


def _fill(folder: Path) -> None:
    """Write into ``folder`` until its file system has no byte left."""
    with open(folder / "filler", "wb", buffering=0) as f:
        try:
            while True:
                f.write(b"\0" * 4096)
        except OSError as e:
            assert e.errno == errno.ENOSPC, e


@pytest.fixture(scope="module")
def places(tmp_path_factory):
    """Folders that refuse writes: {'under-file': a file, 'read-only': ..., 'full': ...};
    a kind that cannot be made here maps to the reason."""
    base = tmp_path_factory.mktemp("places")
    (base / "afile").write_text("a file, not a folder\n")
    out = {"under-file": base / "afile"}
    mounted = []
    try:
        # kind: tmpfs options, and what to do after mounting
        for kind, options, then in (("read-only", ("ro", "size=64k"), None), ("full", ("size=256k",), _fill),
                                    ("fills up", ("size=32k",), None)):
            where = base / kind.replace(" ", "-")
            why = mount_tmpfs(where, *options)
            if why is None:
                mounted.append(where)
                if then:
                    then(where)
                out[kind] = where
            elif kind == "read-only" and os.geteuid() != 0:      # a folder without write permission will do
                where.mkdir(exist_ok=True)
                where.chmod(0o555)
                out[kind] = where
            else:
                out[kind] = why
        yield out
    finally:
        for m in mounted:
            unmount(m)


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    """A record file, a finished run folder, the same with a manifest that is not JSON, a
    record nested 100,000 deep, an agent whose constructor raises, an experiment file."""
    d = tmp_path_factory.mktemp("inputs")
    r = kc("record", "--rounds", "2", "-o", d / "r.jsonl")
    assert r.returncode == 0, r.stderr
    r = kc("tournament", "--agents", "greedy,random,king-first", "--rounds", "300", "--jobs", "1", "--quiet",
           "--out", d / "run")
    assert r.returncode == 0, r.stderr
    shutil.copytree(d / "run", d / "badrun")
    (d / "badrun" / "manifest.json").write_text('{"format": "kc-sim/tournament/2", "config": {')
    shutil.copytree(d / "run", d / "badpart")
    part = next((d / "badpart" / "rounds").glob("part-*.parquet"))
    part.write_bytes(b"PAR1" + os.urandom(2000) + b"PAR1")
    (d / "deep.jsonl").write_text("[" * 100_000 + "]" * 100_000 + "\n")
    (d / "boom.py").write_text(RAISING_AGENT)
    (d / "tiny.toml").write_text(EXPERIMENT)
    (d / "broken.toml").write_text("name = 'x'\n[[runs]\n")
    return {"rec": d / "r.jsonl", "run": d / "run", "badrun": d / "badrun", "badpart": d / "badpart",
            "deep": d / "deep.jsonl",
            "boom": f"{d / 'boom.py'}:Boom", "exp": d / "tiny.toml", "broken": d / "broken.toml"}


def _args(template, inputs, out="", tmp=""):
    return [str(a).format(out=out, tmp=tmp, **{k: str(v) for k, v in inputs.items()}) for a in template]


# --- outputs that cannot be written --------------------------------------------------------------------

OUTPUTS = {
    "record": ["record", "--rounds", "40", "-o", "{out}/r.jsonl"],
    "play": ["play", "--agents", "greedy,random", "--seed", "3", "-o", "{out}/p.jsonl"],
    "render": ["render", "{rec}", "-o", "{out}/p.svg"],
    "replay --html": ["replay", "{rec}", "--html", "{out}/p.html"],
    "analyse -o": ["analyse", "{rec}", "--budget", "4", "--no-luck", "-o", "{out}/a.html"],
    "tournament": ["tournament", "--agents", "greedy,random", "--rounds", "200", "--jobs", "1", "--quiet",
                   "--out", "{out}/run"],
    "bench-agent": ["bench-agent", "greedy", "--baselines", "random", "--rounds", "200", "-j", "1", "--quiet",
                    "--out", "{out}/run"],
    "run": ["run", "{exp}", "--jobs", "1", "--quiet", "--no-plots", "--out", "{out}/exp"],
    "plot": ["plot", "{run}", "--out", "{out}/figures"],
    "report": ["report", "{run}", "--out", "{out}/report.html"],
    "leaderboard": ["leaderboard", "{run}", "--bootstrap", "0", "--out", "{out}/board"],
    "power": ["power", "--agents", "greedy,random", "--pilot-rounds", "400", "--out", "{out}/pilot"],
    "train": ["train", "--steps", "64", "--envs", "4", "--evals", "0", "--eval-rounds", "10", "--out",
              "{out}/model.zip"],
}
#: what the line says, in any of these words (the run folder's own message says "not a directory")
SAYS = {"under-file": ("a file where a folder is needed", "not a directory", "a part of this path is a file"),
        "read-only": ("read-only file system",) if os.geteuid() == 0 else ("permission denied",),
        "full": ("no space left on",), "fills up": ("no space left on",)}
#: commands whose output outgrows 32 kB: the disk fills up in their own write
FILLS_UP = ["record", "replay --html", "analyse -o", "report", "plot", "tournament", "leaderboard"]


@pytest.mark.parametrize("kind,command", [(k, c) for k in ("under-file", "read-only", "full") for c in sorted(OUTPUTS)]
                         + [("fills up", c) for c in FILLS_UP])
def test_an_output_that_cannot_be_written_is_one_line(places, inputs, command, kind):
    where = places[kind]
    if isinstance(where, str):
        pytest.skip(f"{kind} output: {where}")
    out = where / command.split()[0]            # one output per command: a failed one leaves no trace for the next
    err = one_line_error(kc(*_args(OUTPUTS[command], inputs, out=out)))
    assert str(out) in err and any(s in err.lower() for s in SAYS[kind]), err
    if kind == "fills up":      # written whole or not at all: no truncated page, no hidden half-file holding the space
        assert not list(out.rglob("*.tmp")), list(out.rglob("*"))
        if command in ("record", "replay --html", "analyse -o", "report"):
            assert not list(out.rglob("*.*")), list(out.rglob("*"))


@pytest.mark.parametrize("command", [["check", "{rec}"], ["agents"], ["replay", "{rec}", "--no-pause"],
                                     ["render", "{rec}", "-o", "/dev/full"]], ids=lambda c: c[0])
def test_stdout_on_a_full_device_is_one_line(inputs, tmp_path, command):
    with open("/dev/full", "w") as full:
        r = subprocess.run([*KC, *_args(command, inputs, tmp=tmp_path)], stdout=full, stderr=subprocess.PIPE,
                           text=True, timeout=300)
    r.stdout = ""
    one_line_error(r, "no space left on the device")
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode), "the output device was replaced by a file"


def test_an_output_through_a_link_or_to_a_device_stays_what_it_is(inputs, tmp_path):
    """Outputs are written whole (a temporary renamed into place), but a symbolic link stays a
    link to the page written, and a device (/dev/stdout) is written, not replaced by a file."""
    (tmp_path / "pages").mkdir()
    link = tmp_path / "latest.html"
    link.symlink_to(tmp_path / "pages" / "p.html")
    r = kc("replay", inputs["rec"], "--html", link)
    assert r.returncode == 0, r.stderr
    assert link.is_symlink() and "<html" in (tmp_path / "pages" / "p.html").read_text()
    r = subprocess.run([*KC, "render", str(inputs["rec"]), "-o", "/dev/stdout"], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0 and "<svg" in r.stdout, r.stderr


# --- malformed inputs ----------------------------------------------------------------------------------

MALFORMED = {
    "record": (["record", "--agents", "{boom},random", "-o", "{tmp}/r.jsonl"], "boom in __init__"),
    "play": (["play", "--agents", "{boom},greedy", "--seed", "1", "-o", "{tmp}/p.jsonl"], "boom in __init__"),
    "tournament": (["tournament", "--agents", "{boom},random", "--rounds", "20", "--jobs", "1", "--quiet",
                    "--out", "{tmp}/run"], "boom in __init__"),
    "bench-agent": (["bench-agent", "{boom}", "--baselines", "random", "--rounds", "20", "-j", "1"],
                    "boom in __init__"),
    "bench-agent --check": (["bench-agent", "{boom}", "--check", "--rounds", "20"], "boom in __init__"),
    "check": (["check", "{deep}"], "nested 100,000 deep"),
    "analyse": (["analyse", "{deep}"], "nested 100,000 deep"),
    "analyse --sample": (["analyse", "{badrun}", "--sample", "2"], "no saved game records"),
    "replay": (["replay", "{deep}", "--no-pause"], "nested 100,000 deep"),
    "replay --html": (["replay", "{deep}", "--html", "{tmp}/p.html"], "nested 100,000 deep"),
    "render": (["render", "{deep}", "-o", "{tmp}/p.svg"], "nested 100,000 deep"),
    "plot": (["plot", "{badrun}"], "manifest.json"),
    "report": (["report", "{badrun}"], "manifest.json"),
    "leaderboard": (["leaderboard", "{badpart}"], "part-"),
    "power": (["power", "{badrun}"], "JSON"),
    "run": (["run", "{broken}"], "broken.toml"),
    "train": (["train", "--opponent", "{boom}", "--steps", "64"], "a Python agent"),
    "agents": (["agents", "--bogus"], "--bogus"),
    "bench": (["bench", "--scale", "--scale-rounds", "x"], "bad --scale-rounds"),
    "warm": (["warm", "--agents", "bogus"], "unknown agent 'bogus'"),
    "serve": (["serve", "--port", "99999"], "bad --port 99999"),
    "bench-serve": (["bench-serve", "--players", "0"], "expected 1-500 players"),
}


@pytest.mark.parametrize("command", sorted(MALFORMED))
def test_a_malformed_input_is_one_line(inputs, tmp_path, command):
    template, says = MALFORMED[command]
    one_line_error(kc(*_args(template, inputs, tmp=tmp_path)), says)


def test_every_listed_command_is_covered():
    """Each command ``kc-sim --help`` lists has a malformed-input case here (and one with an
    output, where it writes a file, or its stdout on a full device): a new command fails this."""
    text = kc("--help").stdout
    listed = {line.split()[0] for line in text.split("Commands:", 1)[1].splitlines() if line.strip()}
    assert {c.split()[0] for c in MALFORMED} == listed
    # serve's data folder (a file there, an unwritable one) is tested in tests/serve/test_cli.py
    assert listed - {c.split()[0] for c in OUTPUTS} == {"check", "agents", "bench", "warm", "serve",
                                                                 "bench-serve"}
