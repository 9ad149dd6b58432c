"""The installed ``kc-sim`` command run as a person runs it: in a pseudo-terminal.

Each test spawns the venv's ``kc-sim`` entry point (next to ``sys.executable``) with
:mod:`pexpect`, so the child has a real terminal: ``sys.stderr.isatty()`` is true and the
progress bar is drawn, ``kc-sim play`` reads typed lines, Ctrl-C is the terminal's
interrupt character. Every wait has a timeout; on a timeout (a hang) the child's whole
process group is killed and the test fails with the text on the screen, so a hang is a
clear failure and never a stuck suite.

Covered: a default tournament (progress bar, table, final line); ``kc-sim play`` with
typed moves, junk and end of input / quit; Ctrl-C during a tournament and the resumed
rerun matching an uninterrupted run part by part; a faulty Python agent under loky (2
workers, three times), dask and sequential (one-line error, fault record, no traceback,
no hang, no worker left behind); a loky worker killed from outside, then the rerun.
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pexpect
import psutil
import pytest

from kc_sim.core.cache import source_hash

KC_SIM = Path(sys.executable).parent / "kc-sim"
HERE = Path(__file__).parents[1]
BUGGY = HERE / "helpers" / "agents" / "buggy.py"

# the long tournament of the interrupt and killed-worker tests: 250 chunks, ~5 s on 2 cores
# (twice that under load), long enough that two interruptions, each landing soon after a
# chunk is seen done (14-18 chunks an interruption here, 10-11 under load), still leave
# work for the rerun
BIG = ["tournament", "--agents", "greedy,merger", "--rounds", "1500000", "--chunk-size", "6000",
       "--jobs", "2", "--out", "RUN"]

ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b[@-_]")
TRACEBACK_WORDS = ("Traceback", "InvalidStateError", "Exception in thread")

_warm = {"source": None}


@pytest.fixture(autouse=True)
def warm_numba_cache(tmp_path_factory):
    """Load (or, after an edit of the package, compile) the compiled code outside any timed
    wait: the time limits below guard against hangs, not against a cold cache. Runs again
    only when the package's source changed since the last warm-up."""
    assert KC_SIM.exists(), f"no installed kc-sim next to {sys.executable}"
    stamp = source_hash()             # kc-sim keys its numba cache on the package's sources
    if _warm["source"] == stamp:
        return
    where = tmp_path_factory.mktemp("warm")
    for agents in ("greedy,merger", "agents.examples.my_python_agent:CautiousShedder,greedy"):
        subprocess.run([str(KC_SIM), "tournament", "--agents", agents, "--rounds", "200", "--jobs", "2",
                        "--quiet", "--out", str(where / agents.split(",")[0].replace(":", "_"))],
                       cwd=where, stdin=subprocess.DEVNULL, capture_output=True, timeout=600)
    _warm["source"] = stamp


# --- driving a child in a pty ------------------------------------------------------

def screen_lines(raw: str) -> list[str]:
    """The lines a terminal would show, roughly: escapes dropped, and of a line redrawn
    with carriage returns (the progress bar) only its last drawing."""
    text = ANSI.sub("", raw).replace("\r\n", "\n")
    return [line.rsplit("\r", 1)[-1].rstrip() for line in text.split("\n")]


def as_a_foreground_job() -> None:
    """In the child, before exec: Ctrl-C and Ctrl-\\ at their defaults (not ignored, not
    blocked), as an interactive shell starts a foreground job. Without this the child inherits
    them from pytest, and a suite started as a background job of a non-interactive shell
    (``make test &``, a CI script's ``cmd &``: such a shell ignores SIGINT and SIGQUIT in its
    background jobs) starts kc-sim with Ctrl-C ignored, which it honours, as every program
    does: the Ctrl-C tests then saw the run play to its end (the lost Ctrl-C of issue 34)."""
    for sig in (signal.SIGINT, signal.SIGQUIT):
        signal.signal(sig, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGQUIT})


def command_line(p: psutil.Process) -> str:
    """``p``'s command line, or "" once it has ended (a zombie, or gone)."""
    try:
        return " ".join(p.cmdline())
    except psutil.Error:
        return ""


def ignores_ctrl_c(pid: int) -> bool:
    """Does process ``pid`` ignore SIGINT (its /proc status's SigIgn mask)?"""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("SigIgn:"):
            return bool(int(line.split()[1], 16) & (1 << (signal.SIGINT - 1)))
    return False


class Term:
    """A ``kc-sim`` child in a pty (started as a shell starts a foreground job), everything it
    printed kept in ``raw``."""

    def __init__(self, args, cwd: Path, rows: int = 50, cols: int = 160):
        self.args = [str(a) for a in args]
        self.t0 = time.monotonic()
        self.child = pexpect.spawn(str(KC_SIM), self.args, cwd=str(cwd), encoding="utf-8",
                                   codec_errors="replace", dimensions=(rows, cols), timeout=30,
                                   preexec_fn=as_a_foreground_job)
        self.log = io.StringIO()
        self.child.logfile_read = self.log
        self.pgid = self.child.pid          # the child leads its own session and process group
        self.seen: dict[int, psutil.Process] = {}   # every descendant seen while it ran
        self.note_descendants()

    # the text so far
    @property
    def raw(self) -> str:
        return self.log.getvalue()

    @property
    def lines(self) -> list[str]:
        return screen_lines(self.raw)

    def screen(self, last: int = 40) -> str:
        return "\n".join(self.lines[-last:])

    def elapsed(self) -> float:
        return time.monotonic() - self.t0

    def note_descendants(self) -> list:
        try:
            kids = psutil.Process(self.child.pid).children(recursive=True)
        except psutil.Error:
            return []
        for p in kids:
            self.seen.setdefault(p.pid, p)
        return kids

    def processes(self) -> str:
        """The child and its descendants with their CPU seconds: busy (compiling, playing)
        or idle (waiting on each other), for the message of a timeout."""
        out = []
        try:
            procs = [psutil.Process(self.child.pid)] + self.note_descendants()
        except psutil.Error:
            procs = self.note_descendants()
        for p in procs:
            try:
                cpu = p.cpu_times()
                out.append(f"  {p.pid} {p.status():9s} cpu {cpu.user + cpu.system:6.1f} s  "
                           f"{' '.join(p.cmdline())[:110]}")
            except psutil.Error:
                pass
        return "\n".join(out) or "  (none)"

    def fail(self, why: str):
        if self.child.isalive():
            procs = self.processes()
        else:
            sig = self.child.signalstatus
            procs = f"  kc-sim exited: {'signal ' + str(sig) if sig is not None else self.child.exitstatus}"
        self.kill()
        screen = self.screen() if self.raw.strip() else "(nothing printed)"
        pytest.fail(f"{why} after {self.elapsed():.1f} s: kc-sim {' '.join(self.args)}\n"
                    f"--- screen (last lines) ---\n{screen}\n--- processes ---\n{procs}",
                    pytrace=False)

    def kill(self) -> None:
        """Kill the child's process group and every descendant ever seen."""
        try:
            os.killpg(self.pgid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        for p in list(self.seen.values()) + self.note_descendants():
            try:
                p.kill()
            except psutil.Error:
                pass
        try:
            self.child.close(force=True)
        except Exception:
            pass

    def expect(self, pattern, timeout: float, what: str | None = None) -> int:
        """Wait for ``pattern`` (or a list of them); a timeout or an early end fails the test."""
        pats = pattern if isinstance(pattern, list) else [pattern]
        try:
            i = self.child.expect(pats, timeout=timeout)
        except pexpect.TIMEOUT:
            self.fail(f"timed out ({timeout} s) waiting for {what or pats!r}")
        except pexpect.EOF:
            self.fail(f"kc-sim ended while waiting for {what or pats!r}")
        self.note_descendants()
        return i

    def pump(self, seconds: float) -> bool:
        """Read output for up to ``seconds`` (keeps the pty drained); False once it ended."""
        try:
            self.child.expect([pexpect.TIMEOUT], timeout=seconds)
        except pexpect.EOF:
            return False
        self.note_descendants()
        return True

    def finish(self, timeout: float) -> int:
        """Wait for the end of output and the exit; returns the exit status, or -n if
        signal n killed it (as subprocess does)."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                self.fail(f"did not finish within {timeout} s")
            try:
                self.child.expect([pexpect.EOF, pexpect.TIMEOUT], timeout=min(left, 0.5))
            except pexpect.EOF:
                pass
            self.note_descendants()
            if not self.child.isalive():
                break
        self.child.close()
        self.seconds = self.elapsed()
        if self.child.signalstatus is not None:
            return -self.child.signalstatus
        return self.child.exitstatus


@pytest.fixture
def term(tmp_path):
    """Start kc-sim children in pseudo-terminals (cwd ``tmp_path``); all killed at teardown."""
    started = []

    def start(*args, cwd=None, **kw):
        t = Term(args, cwd or tmp_path, **kw)
        started.append(t)
        return t

    yield start
    for t in started:
        t.kill()


def no_traceback(t: Term) -> None:
    for word in TRACEBACK_WORDS:
        assert word not in t.raw, f"{word!r} on the screen:\n{t.screen()}"


class Soft:
    """Checks that do not stop the test: the later steps (a rerun) still run and report,
    then every failed check is listed at the end."""

    def __init__(self):
        self.problems: list[str] = []

    def check(self, ok, message: str) -> bool:
        if not ok:
            self.problems.append(message)
        return bool(ok)

    def no_traceback(self, t: Term, step: str) -> None:
        found = [w for w in TRACEBACK_WORDS if w in t.raw]
        self.check(not found, f"{step}: {found} on the screen:\n{t.screen()}")

    def report(self) -> None:
        if self.problems:
            pytest.fail("\n\n".join(self.problems), pytrace=False)


def wait_for_done_chunk(t: Term, run: Path, timeout: float, more_than: int = 0) -> int:
    """Drain the child's output until its manifest lists more than ``more_than`` chunks
    done (chunks this child played: a resumed run starts with some); the number done."""
    deadline = time.monotonic() + timeout
    manifest = run / "manifest.json"
    while time.monotonic() < deadline:
        if not t.pump(0.2):
            t.fail("kc-sim ended before any chunk was done")
        try:
            m = json.loads(manifest.read_text())
        except (OSError, ValueError):
            continue
        done = sum(c.get("state") == "done" for c in m.get("chunks", []))
        if done > more_than:
            # the command runs in the supervisor's child (the supervisor ignores Ctrl-C on purpose, and
            # so do the workers): it must not, or the Ctrl-C the test sends next is lost before kc-sim sees it
            kept = [p.pid for p in psutil.Process(t.pgid).children() if ignores_ctrl_c(p.pid)]
            assert not kept, f"processes {kept} of the command ignore Ctrl-C (SIGINT inherited as ignored)"
            return done
    t.fail(f"no chunk done in {run / 'manifest.json'} within {timeout} s")


def chunks_done(run: Path) -> tuple[int, int]:
    """(chunks done, chunks in all) from the run folder's manifest."""
    chunks = json.loads((run / "manifest.json").read_text())["chunks"]
    return sum(c["state"] == "done" for c in chunks), len(chunks)


def rerun_finishes(term, soft: Soft, *args) -> str:
    """Run the same command again: it must finish (exit 0) without a traceback; returns
    its final line."""
    t = term(*args)
    status = t.finish(timeout=120)
    assert status == 0, t.screen()
    soft.no_traceback(t, "the rerun")
    final = next((x for x in t.lines if "results in" in x), "")
    soft.check("were already done" in final, f"the rerun's final line:\n{t.screen()}")
    # its time and rate are the rerun's own, over what it played: said so, not read as the run's
    soft.check(re.search(r"^[\d,]+ rounds in the run, [\d,]+ of them played now in ", final),
               f"the rerun's final line should say what it played now: {final!r}")
    return final


def leftover_workers(t: Term) -> list:
    """Live processes that were the child's workers: seen as its descendants, still in its
    process group, or a loky/dask worker whose parent is the (gone) child."""
    out = {}
    for p in t.seen.values():
        try:
            if p.is_running() and p.status() != psutil.STATUS_ZOMBIE:
                out[p.pid] = p
        except psutil.Error:
            pass
    for p in psutil.process_iter(["pid", "ppid", "cmdline", "status"]):
        try:
            if p.info["status"] == psutil.STATUS_ZOMBIE:
                continue
            cmd = " ".join(p.info["cmdline"] or [])
            same_group = os.getpgid(p.pid) == t.pgid
            worker = ("joblib.externals.loky" in cmd or "multiprocessing" in cmd or "dask" in cmd)
            if same_group or (worker and p.info["ppid"] == t.child.pid):
                out[p.pid] = p
        except (psutil.Error, ProcessLookupError, PermissionError):
            pass
    return list(out.values())


def assert_no_workers_left(t: Term, within: float = 5.0) -> None:
    deadline = time.monotonic() + within
    while True:
        left = leftover_workers(t)
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    desc = []
    for p in left:
        try:
            desc.append(f"{p.pid}: {' '.join(p.cmdline())[:160]}")
        except psutil.Error:
            pass
        try:
            p.kill()
        except psutil.Error:
            pass
    assert not left, f"worker processes still running {within} s after kc-sim exited:\n" + "\n".join(desc)


def read_parts(run: Path) -> dict:
    import pyarrow.parquet as pq

    return {p.name: pq.read_table(p) for p in sorted((run / "rounds").glob("*.parquet"))}


# --- 1. a default tournament ---------------------------------------------------------

def test_default_tournament_draws_a_bar_then_the_table_and_final_line(term, tmp_path):
    t = term("tournament", "--agents", "greedy,merger", "--out", tmp_path / "RUN")
    # the progress bar while it runs (a percentage, a rate, bar characters), before the table
    bar = [r"\d+%\|", r"rounds/s", r"[█▏▎▍▌▋▊▉]", r"\d+(\.\d+)?k?/\d+(\.\d+)?[kM]? "]
    if t.expect(bar + [r"win rate"], timeout=60, what="a progress bar") == len(bar):
        t.fail("the summary table came with no progress bar drawn before it")
    t.expect(r"win rate", timeout=60, what="the summary table")
    status = t.finish(timeout=60)
    assert status == 0, t.screen()
    no_traceback(t)
    lines = [x for x in t.lines if x.strip()]
    header = next((x for x in lines if "win rate" in x), None)
    assert header is not None and header.split()[0] == "agent", t.screen()
    rows = lines[lines.index(header) + 1:]
    assert [x.split()[0] for x in rows[:2]] == ["greedy", "pile-merger"], t.screen()
    final = next((x for x in lines if "results in" in x), "")
    assert final.startswith("200,000 rounds") and final.endswith(str(tmp_path / "RUN")), t.screen()
    # after the final line only the file list follows ("  rounds    RUN/rounds" ...)
    assert all(x.startswith("  ") for x in lines[lines.index(final) + 1:]), t.screen()
    assert (tmp_path / "RUN" / "summary.parquet").exists()
    m = json.loads((tmp_path / "RUN" / "manifest.json").read_text())
    assert m["finished"] and all(c["state"] == "done" for c in m["chunks"])


# --- 2. kc-sim play with typed moves -------------------------------------------------

PROMPT = r"move \[1-(\d+), text, help, quit\]> "


def last_moves(t: Term) -> dict[int, str]:
    """The numbered moves of the last 'Your moves:' list on the screen."""
    lines = t.lines
    start = max(i for i, x in enumerate(lines) if x.strip() == "Your moves:")
    moves = {}
    for x in lines[start + 1:]:
        m = re.match(r"\s+(\d+)\) (\S+)", x)
        if not m:
            break
        moves[int(m.group(1))] = m.group(2)
    return moves


@pytest.mark.parametrize("how", ["eof", "quit"])
def test_play_typed_moves_junk_and_quit(term, tmp_path, how):
    out = tmp_path / "game.jsonl"
    t = term("play", "--agents", "human,greedy", "--seed", "3", "--out", out.name)
    t.expect(PROMPT, timeout=60, what="the first move prompt")
    assert "Your hand" in t.raw and "stock" in t.raw

    played = []
    # a numbered move
    played.append(last_moves(t)[1])
    t.child.sendline("1")
    t.expect(rf"you played {re.escape(played[-1])}", timeout=10)
    t.expect(PROMPT, timeout=20, what="the prompt after a numbered move")
    # a text move: the last one listed that is not "stop", typed as shown
    moves = last_moves(t)
    text_move = [m for m in moves.values() if m != "stop"][-1]
    played.append(text_move)
    t.child.sendline(text_move)
    t.expect(rf"you played {re.escape(text_move)}", timeout=10)
    t.expect(PROMPT, timeout=20, what="the prompt after a text move")
    # end the turn by its text; the agent plays, then it is our turn again
    t.child.sendline("stop")
    t.expect(PROMPT, timeout=30, what="the prompt of the next turn")

    # junk re-prompts with the reason
    t.child.sendline("hello")
    t.expect(r"bad action 'hello'", timeout=10)
    t.expect(PROMPT, timeout=10, what="a re-prompt after junk")
    t.child.sendline("99")
    t.expect(r"no move numbered 99", timeout=10)
    t.expect(PROMPT, timeout=10, what="a re-prompt after a bad number")

    if how == "eof":
        t.child.sendeof()
        t.expect(r"end of input", timeout=10)
    else:
        t.child.sendline("quit")
    t.expect(r"saved to", timeout=10, what="the saved record's path")
    status = t.finish(timeout=20)
    assert status == 0, t.screen()
    no_traceback(t)
    assert out.exists(), t.screen()
    assert f"saved to {out.name}" in t.raw
    recs = [json.loads(x) for x in out.read_text().splitlines() if x.strip()]
    assert len(recs) == 1, recs
    rec = recs[0]
    assert rec["players"] == ["human", "greedy"] and rec["seed"] == 3
    assert rec["result"]["end"] == "unfinished"
    acted = [a for turn in rec["turns"] for a in turn.get("actions", [])]
    assert acted[:2] == played, (acted, played)


# --- 3. Ctrl-C, the rerun, and an uninterrupted run ----------------------------------

def test_ctrl_c_then_rerun_gives_the_uninterrupted_parts(term, tmp_path):
    """Ctrl-C twice into the same run folder (the rerun resumes and is interrupted again once it
    has played a chunk), then the rerun that finishes."""
    run = tmp_path / "RUN"
    soft = Soft()
    try:
        done = 0
        for attempt in (1, 2):
            t = term(*BIG)
            wait_for_done_chunk(t, run, timeout=90, more_than=done)
            t.child.sendintr()
            sent = time.monotonic()
            status = t.finish(timeout=15)
            took = time.monotonic() - sent
            step = f"Ctrl-C {attempt} (exit {status} {took:.1f} s after it)"
            soft.check(status == 130, f"{step}: expected exit 130:\n{t.screen(15)}")
            soft.no_traceback(t, step)
            said = [x for x in t.lines if "interrupted" in x]
            if soft.check(len(said) == 1, f"{step}: expected one line saying it was interrupted, got "
                          f"{len(said)}:\n{t.screen().strip() or '(nothing on the screen)'}\n"
                          f"last output: {t.raw[-240:]!r}"):
                soft.check(said[0].startswith("kc-sim: interrupted") and "rerun" in said[0], f"{step}: {said[0]!r}")
            assert_no_workers_left(t, within=5)
            now, total = chunks_done(run)
            assert done < now < total, f"{step}: {now} of {total} chunks done, {done} before"
            done = now

        final = rerun_finishes(term, soft, *BIG)
        soft.check(re.search(rf"\b{done} of {total} chunks were already done", final),
                   f"the rerun's final line should say {done} of {total} chunks were already done: {final!r}")

        # an uninterrupted run of the same command into another folder: the same parts
        other = tmp_path / "other"
        other.mkdir()
        t3 = term(*BIG, cwd=other)
        status = t3.finish(timeout=120)
        assert status == 0, t3.screen()
        a, b = read_parts(run), read_parts(other / "RUN")
        assert a.keys() == b.keys() and len(a) == total, (sorted(a), sorted(b))
        for name in a:
            assert a[name].equals(b[name]), f"{name} differs between the resumed and the uninterrupted run"
    finally:
        soft.report()


def test_ctrl_c_with_dask_workers(term, tmp_path):
    """Ctrl-C with a dask LocalCluster of 2 workers: the same one line and exit 130, no
    traceback, no worker left; the rerun finishes the run."""
    run = tmp_path / "RUN"
    args = [*BIG, "--backend", "dask"]
    t = term(*args)
    wait_for_done_chunk(t, run, timeout=90)
    t.child.sendintr()
    status = t.finish(timeout=15)
    assert status == 130, t.screen(15)
    no_traceback(t)
    said = [x for x in t.lines if x.startswith("kc-sim:")]
    assert len(said) == 1 and said[0].startswith("kc-sim: interrupted with") and "rerun" in said[0], t.screen(15)
    assert_no_workers_left(t, within=10)
    soft = Soft()
    rerun_finishes(term, soft, *args)
    soft.report()


# --- 4./5. a faulty agent ------------------------------------------------------------

def run_buggy(term, where: Path, *extra, timeout: float):
    """Run the faulty agent's tournament in a pty in ``where``; check the exit status, the
    one-line error and the saved fault record."""
    where.mkdir(parents=True, exist_ok=True)
    shutil.copy(BUGGY, where / "buggy.py")
    run = where / "RUN"
    t = term("tournament", "--agents", "buggy.py:Buggy,greedy", *extra, "--rounds", "40000", "--out", run,
             cwd=where)
    status = t.finish(timeout=timeout)
    assert status == 2, f"exit {status} after {t.seconds:.1f} s:\n{t.screen()}"
    no_traceback(t)
    errors = [x for x in t.lines if x.startswith("kc-sim: error:")]
    assert len(errors) == 1, t.screen()
    line = errors[0]
    faults = sorted((run / "faults").glob("*.jsonl"))
    assert faults, f"no saved record in {run / 'faults'}:\n{t.screen()}"
    assert "Buggy" in line, line
    seed = re.search(r"\bseed (\d+)", line)
    assert seed, line
    assert re.search(r"\bround \d+", line), line
    # the record of the round the line names: saved, whole, naming the same action
    named = [f for f in faults if f.name in line]
    assert len(named) == 1, (line, [f.name for f in faults])
    recs = [json.loads(x) for x in named[0].read_text().splitlines() if x.strip()]
    assert len(recs) == 1, f"{named[0]} holds {len(recs)} records"
    rec = recs[0]
    assert str(rec["seed"]) == seed.group(1), (line, rec["seed"])
    action = rec["fault"]["action"]
    assert action and f"action {action}" in line, (line, rec["fault"])
    assert rec["fault"]["agent"].endswith("Buggy")
    # other workers may have saved faults of their own chunks: none left half-written
    broken = []
    for f in faults:
        try:
            ok = [json.loads(x) for x in f.read_text().splitlines() if x.strip()]
        except ValueError:
            ok = []
        if not ok:
            broken.append(f"{f.name} ({f.stat().st_size} bytes)")
    assert not broken, f"fault records left empty or cut short in {run / 'faults'}: {broken}"
    return t


def test_faulty_agent_with_two_workers_stops_cleanly_three_times(term, tmp_path):
    """Whether it hangs can depend on timing: three runs, each within 20 s."""
    for attempt in (1, 2, 3):
        t = run_buggy(term, tmp_path / f"attempt{attempt}", "--jobs", "2", timeout=20)
        assert_no_workers_left(t, within=5)


@pytest.mark.parametrize("backend", [["--backend", "dask", "--jobs", "2"], ["--backend", "sequential"]],
                         ids=["dask", "sequential"])
def test_faulty_agent_other_backends(term, tmp_path, backend):
    t = run_buggy(term, tmp_path, *backend, timeout=30)
    assert_no_workers_left(t, within=5)


# --- 6. a worker killed from outside -------------------------------------------------

def test_killed_worker_ends_with_one_line_and_the_rerun_finishes(term, tmp_path):
    """A loky worker killed twice into the same run folder (the rerun resumes), then the rerun
    that finishes."""
    run = tmp_path / "RUN"
    soft = Soft()
    try:
        done = 0
        for attempt in (1, 2):
            t = term(*BIG)
            wait_for_done_chunk(t, run, timeout=90, more_than=done)
            workers = [p for p in t.note_descendants() if "popen_loky_posix" in command_line(p)]
            assert workers, "no loky worker among the children of kc-sim"
            workers[0].send_signal(signal.SIGKILL)
            status = t.finish(timeout=20)
            step = f"worker killed {attempt} (exit {status} after {t.seconds:.1f} s)"
            assert status != 0, t.screen()
            soft.check(status == 2, f"{step}: expected exit 2:\n{t.screen(15)}")
            soft.no_traceback(t, step)
            said = [x for x in t.lines if x.startswith("kc-sim:")]
            if soft.check(len(said) == 1, f"{step}: expected one 'kc-sim:' line, got {len(said)}:\n{t.screen(15)}"):
                # under load the killed worker may still be warming up (a chunk is done by the other
                # one): the line then names the warm-up, as true as a chunk's number
                soft.check(re.search(r"\bchunks? \d+|while playing the warm-up", said[0]),
                           f"{step}: neither a chunk nor the warm-up named in {said[0]!r}")
                soft.check(re.search(r"resum|rerun", said[0]), f"{step}: no word of resuming in {said[0]!r}")
            assert_no_workers_left(t, within=5)
            done, _ = chunks_done(run)

        rerun_finishes(term, soft, *BIG)
    finally:
        soft.report()


def test_play_against_a_trained_model(term, tmp_path):
    """A policy trained by kc-sim train (``sb3:model.zip``) as the opponent in the terminal game:
    it plays its turns, and the saved record names it."""
    pytest.importorskip("sb3_contrib")
    from kc_sim.learn.train import train

    train("random", 2, 1024, tmp_path / "model.zip", envs=16, evals=0, eval_rounds=50, log=None)
    out = tmp_path / "game.jsonl"
    t = term("play", "--agents", "human,sb3:model.zip", "--seed", "5", "--out", out.name)
    t.expect(PROMPT, timeout=60, what="the first move prompt")
    t.child.sendline("stop")                      # our turn ends; the model plays its turn
    t.expect(PROMPT, timeout=30, what="the prompt after the model's turn")
    assert "sb3:model.zip" in t.raw
    t.child.sendline("quit")
    t.expect(r"saved to", timeout=10, what="the saved record's path")
    assert t.finish(timeout=20) == 0, t.screen()
    no_traceback(t)
    rec = json.loads(out.read_text().splitlines()[0])
    assert rec["players"] == ["human", "sb3:model.zip"]
    assert any(turn["seat"] == 1 for turn in rec["turns"])
