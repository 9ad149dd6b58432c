"""The run folder of a tournament as an object: its lock, its manifest, verified parts, resume.

**One run at a time.** :meth:`RunFolder.open` takes an advisory lock (``fcntl.flock`` on
``.lock`` in the folder) held until the run ends, also when it fails; the lock file says
who holds it (pid, command, since when). A second command on the same folder says that in
one line and stops (exit 2), or waits for it with ``wait=True`` (``--wait``). The lock
dies with its process, so a killed run never leaves the folder locked.

**The manifest.** ``manifest.json`` stores the configuration of
:class:`~kc_sim.tournament.plan.Plan` and the state of every chunk. Reopening a folder
with the same configuration keeps the chunks done whose parts are intact and plays the
rest; a different configuration, or a folder that is not a run folder, is refused with a
:class:`~kc_sim.errors.UserError` before anything is played.

**Verified parts.** :meth:`RunFolder.store` writes a chunk's parts, then records their
size and sha256 in the manifest and marks the chunk done (in that order), so after a crash
every chunk listed done is complete. Every part also names its run and chunk in its
metadata (``kc_sim.chunk``). On reopening, a part whose size or hash differs (bytes
flipped, truncated, replaced by a copy of another part) is played again, so the data then
equal an uninterrupted run's; every reader gets parts through :func:`verified_parts`,
which names a damaged, missing or foreign part in one line instead of reading it. A
missing or damaged ``manifest.json`` is rebuilt from the parts that prove to belong to
this run and chunk (they are read whole, their page checksums checked); if some parts
belong to another run, or say nothing (an older kc-sim), the folder is refused and the
parts are kept.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shlex
import shutil
import socket
import sys
import time
from importlib import metadata
from pathlib import Path

from kc_sim.errors import UserError
from kc_sim.tournament import results
from kc_sim.tournament.plan import FORMAT, Plan
from kc_sim.tournament.schema import matches_table, rounds_table

__all__ = ["LOCK_FILE", "WATCH_DIR", "RunFolder", "check_run_folder", "notice", "verified_file", "verified_parts"]

LOCK_FILE = ".lock"            # the advisory lock of the command using the folder, and who holds it
WATCH_DIR = ".watch"           # what each playing process is doing (kc_sim.tournament.watch)
_OWN = {LOCK_FILE, WATCH_DIR}  # the folder's own housekeeping: not content


def notice(message: str) -> None:
    """A line the user should see while a run goes on (not an error): on stderr."""
    print(f"kc-sim: {message}", file=sys.stderr, flush=True)


def _versions() -> dict:
    out = {"python": sys.version.split()[0]}
    for pkg in ("kc-sim", "numpy", "numba", "pandas", "pyarrow", "joblib", "dask", "distributed"):
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            pass
    return out


def _describe_difference(old: dict, new: dict) -> str:
    keys = [k for k in new if old.get(k) != new.get(k)]
    shown = []
    for k in keys[:3]:
        a, b = old.get(k), new.get(k)
        shown.append(f"{k} {b!r} here but {a!r} there")
    return "; ".join(shown)


def _content(out: Path) -> list[Path]:
    return [p for p in out.iterdir() if p.name not in _OWN] if out.is_dir() else []


def check_run_folder(plan: Plan) -> dict | None:
    """The manifest of the run already in ``plan.out`` (None for a new or empty folder, or
    one whose manifest is missing or damaged: :meth:`RunFolder.open` rebuilds or refuses
    it). Refuses a folder holding a different run, or anything that is not a run folder."""
    out = plan.out
    if out.exists() and not out.is_dir():
        raise UserError(f"cannot use {out} as the run folder: it is a file")
    manifest_path = out / results.MANIFEST_FILE
    if manifest_path.exists():
        try:
            old = results.read_manifest(out)
        except UserError:
            return None                       # damaged: rebuilt from its parts, or refused, when opened
        except OSError as e:
            raise UserError(f"cannot read {manifest_path}: {e.strerror or e}") from None
        if old.get("config") != plan.config:
            diff = _describe_difference(old.get("config", {}), plan.config)
            raise UserError(f"{out} holds a different run ({diff}); rerun that command to resume it, "
                            "or choose another --out")
        return old
    if _content(out) and not results.parts_on_disk(out):
        raise UserError(f"{out} exists and is not a tournament folder (no {results.MANIFEST_FILE}); "
                        "choose another --out")
    return None


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


# --- the lock ------------------------------------------------------------------------------

def _lock(out: Path, command: str | None, wait: bool) -> int:
    """Take the folder's lock (a file descriptor, released when closed or when the process
    ends) and write who holds it. Held by another process: a UserError naming it, or with
    ``wait`` a notice and a wait."""
    path = out / LOCK_FILE
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as e:
        raise UserError(f"cannot write to {out}: {e.strerror or e}") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _holder(fd)
            if not wait:
                raise UserError(f"{out} is in use by another run: {holder}; wait for it to end, or give --wait "
                                "to start once it has") from None
            notice(f"waiting for the run that holds {out}: {holder}")
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError as e:                 # a file system without locks (some network ones)
            notice(f"cannot lock {out} ({e.strerror or e}): make sure no other command uses it meanwhile")
        me = {"pid": os.getpid(), "host": socket.gethostname(), "command": command or "run_tournament (Python)",
              "since": _now()}
        os.ftruncate(fd, 0)
        os.pwrite(fd, (json.dumps(me) + "\n").encode(), 0)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _holder(fd: int) -> str:
    """Who holds the lock, from the lock file: ``pid 123 (kc-sim tournament ...) since ...``."""
    try:
        info = json.loads(os.pread(fd, 1 << 16, 0).decode("utf-8", "replace") or "{}")
        where = "" if info.get("host") in (None, socket.gethostname()) else f" on {info['host']}"
        return f"pid {info['pid']}{where} ({info['command']}) since {info['since']}"
    except (OSError, ValueError, KeyError, TypeError):
        return "another process (it has not said which yet)"


# --- the folder ------------------------------------------------------------------------------

class RunFolder:
    """The folder of one run while it is played: its plan, its lock, its manifest (a dict,
    written to ``manifest.json`` by :meth:`save`) and the chunks' parts. Open it with
    :meth:`open`; :meth:`close` (or leaving a ``with`` block) releases the lock."""

    def __init__(self, plan: Plan, manifest: dict, lock_fd: int | None = None):
        self.plan = plan
        self.path = plan.out
        self.manifest = manifest
        self.chunks = plan.schedule.chunks()
        self._lock_fd = lock_fd
        #: the run and chunk a part belongs to, as written in its metadata (CHUNK_KEY)
        self.run_id = run_id(plan.config)

    # --- opening -----------------------------------------------------------------------

    @classmethod
    def open(cls, plan: Plan, command: str | None, *, wait: bool = False) -> RunFolder:
        """Lock the run folder of ``plan``, then create or reopen it and write its manifest:
        chunks done whose parts are intact stay done, every other chunk is pending (a
        damaged part is named on stderr and played again). Refuses a folder of another run
        (:func:`check_run_folder`), and a folder another command is using (unless ``wait``)."""
        out = plan.out
        if not (out / LOCK_FILE).exists():
            check_run_folder(plan)          # refuse what is not a run folder before leaving a trace in it
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise UserError(f"cannot write to {out}: {e.strerror or e}") from None
        fd = _lock(out, command, wait)
        try:
            old = check_run_folder(plan)    # again, under the lock: another run may have just made it
            folder = cls(plan, {}, fd)
            if old is None and ((out / results.MANIFEST_FILE).exists() or results.parts_on_disk(out)):
                done = folder._rebuild()
            else:
                done = folder._verify(old)
            folder.manifest = folder._new_manifest(old, done, command)
            (out / results.ROUNDS_DIR).mkdir(parents=True, exist_ok=True)
            if plan.mode == "matches":
                (out / results.MATCHES_DIR).mkdir(exist_ok=True)
            results.clean_temporaries(out)
            shutil.rmtree(out / WATCH_DIR, ignore_errors=True)       # left by a run that was killed
            folder.save()
        except OSError as e:
            os.close(fd)
            raise UserError(f"cannot write to {out}: {e.strerror or e}") from None
        except BaseException:
            os.close(fd)
            raise
        return folder

    def _new_manifest(self, old: dict | None, done: dict, command: str | None) -> dict:
        """The manifest of this run: ``done`` maps the chunks kept to their manifest entries."""
        plan = self.plan
        return {
            "format": FORMAT,
            "command": command,
            "config": plan.config,
            "schedule": plan.schedule.to_dict(),
            "versions": _versions(),
            "created": (old or {}).get("created", _now()),
            "updated": _now(),
            "finished": False,
            "units_done": 0,
            "chunks": [done.get(c.index) or {
                "index": c.index, "lineup": c.lineup, "groups": [c.start, c.stop],
                plan.mode: plan.schedule.units_of(c), "state": "pending",
                "file": f"{results.ROUNDS_DIR}/{results.part_name(c.index)}"} for c in self.chunks],
        }

    def _part_paths(self, index: int) -> list[str]:
        """The parts of chunk ``index``, relative to the folder."""
        dirs = [results.ROUNDS_DIR] + ([results.MATCHES_DIR] if self.plan.mode == "matches" else [])
        return [f"{d}/{results.part_name(index)}" for d in dirs]

    def _verify(self, old: dict | None) -> dict:
        """The chunks of the old manifest that stay done: listed done, their parts present
        and (when the manifest recorded them) of the recorded size and sha256. The others
        are named on stderr and played again."""
        done, damaged = {}, []
        for entry in (old or {}).get("chunks", []):
            i = entry.get("index")
            if entry.get("state") != "done" or not isinstance(i, int) or not 0 <= i < len(self.chunks):
                continue
            recorded = entry.get("parts") or {}
            bad = [rel for rel in self._part_paths(i)
                   if not (self.path / rel).is_file()
                   or (rel in recorded and results.digest(self.path / rel) != recorded[rel])]
            if bad:
                damaged += [rel for rel in bad if (self.path / rel).exists()]
            else:
                done[i] = entry
        if damaged:
            notice(f"{self.path}: {_listing(damaged)} {'is' if len(damaged) == 1 else 'are'} damaged (size or "
                   f"sha256 differs from {results.MANIFEST_FILE}): playing {'its' if len(damaged) == 1 else 'their'} "
                   "chunk again")
        return done

    def _rebuild(self) -> dict:
        """The chunks kept when ``manifest.json`` is missing or damaged: those whose parts
        say (metadata) they belong to this run and chunk and read back whole. Refuses the
        folder if a readable part belongs to another run or says nothing; a part that does
        not read back whole (its metadata may be what was damaged) is played again."""
        out = self.path
        foreign, done, bad = [], {}, []
        for p in results.parts_on_disk(out):
            meta = results.chunk_identity(p)
            if (meta is None or meta.get("run") != self.run_id) and results.reads_whole(p):
                foreign.append(p.relative_to(out).as_posix())
        if foreign:
            raise UserError(f"{out / results.MANIFEST_FILE} is damaged or missing, and {_listing(foreign)} "
                            f"{'does' if len(foreign) == 1 else 'do'} not say they belong to this run (another run's, or "
                            "an older kc-sim's), so the manifest cannot be rebuilt; the parts are kept: rerun the "
                            "command that made this run, restore manifest.json, or choose another --out")
        for c in self.chunks:
            rels = self._part_paths(c.index)
            if not all((out / rel).is_file() for rel in rels):
                continue
            entries = [results.chunk_identity(out / rel) for rel in rels]
            if all(e is not None and e.get("chunk") == c.index and results.reads_whole(out / rel)
                   for e, rel in zip(entries, rels)):
                rows = entries[0].get("rows")
                done[c.index] = {"index": c.index, "lineup": c.lineup, "groups": [c.start, c.stop],
                                 self.plan.mode: self.plan.schedule.units_of(c), "state": "done",
                                 "file": rels[0], "rows": rows,
                                 "parts": {rel: results.digest(out / rel) for rel in rels}}
            else:
                bad += rels[:1]
        what = f"; {_listing(bad)} damaged, played again" if bad else ""
        notice(f"{out / results.MANIFEST_FILE} was damaged or missing: rebuilt from the parts ({len(done)} of "
               f"{len(self.chunks)} chunks verified{what})")
        return done

    def close(self) -> None:
        """Release the lock (the end of the run, or its failure)."""
        if self._lock_fd is not None:
            shutil.rmtree(self.path / WATCH_DIR, ignore_errors=True)
            os.close(self._lock_fd)
            self._lock_fd = None

    def __enter__(self) -> RunFolder:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # --- the chunks ----------------------------------------------------------------------

    def done(self, index: int) -> bool:
        return self.manifest["chunks"][index]["state"] == "done"

    def n_done(self) -> int:
        return sum(self.done(c.index) for c in self.chunks)

    def parts(self, which: str = results.ROUNDS_DIR) -> list[Path]:
        """The parts of the chunks done (verified when stored or opened), in chunk order."""
        return [self.path / which / results.part_name(c.index) for c in self.chunks
                if self.done(c.index) and (self.path / which / results.part_name(c.index)).exists()]

    def store(self, index: int, res: dict) -> None:
        """Write chunk ``index``'s parts from a worker's result, then record their size and
        sha256 and mark the chunk done in the manifest (in that order)."""
        plan, chunk = self.plan, self.chunks[index]
        lineup = plan.schedule.lineups[chunk.lineup]
        written = {}
        if res["matches"] is not None:
            t = matches_table(res["matches"], chunk.index, chunk.lineup, lineup, plan.schedule.seatings, plan.labels)
            written[results.MATCHES_DIR] = results.write_atomic(
                t, self.path / results.MATCHES_DIR / results.part_name(chunk.index), self._identity(index, t))
        t = rounds_table(res["rounds"], chunk.index, chunk.lineup, lineup, plan.schedule.seatings, plan.labels)
        meta = {results.TALLY_KEY: res["tally"], **self._identity(index, t)}
        written[results.ROUNDS_DIR] = results.write_atomic(
            t, self.path / results.ROUNDS_DIR / results.part_name(chunk.index), meta)
        entry = self.manifest["chunks"][chunk.index]
        entry.update(state="done", rows=int(t.num_rows), seconds=round(res["seconds"], 3),
                     parts={f"{d}/{p.name}": results.digest(p) for d, p in sorted(written.items(), reverse=True)})
        self.save()

    def _identity(self, index: int, table) -> dict:
        return {results.CHUNK_KEY: json.dumps({"run": self.run_id, "chunk": index, "rows": table.num_rows})}

    def drop(self, indices, stop: dict) -> None:
        """Remove the parts of chunks ``indices`` (played beyond an early stop), mark them
        ``skipped`` and record the ``stop`` in the manifest."""
        for i in indices:
            for folder in (results.ROUNDS_DIR, results.MATCHES_DIR):
                (self.path / folder / results.part_name(i)).unlink(missing_ok=True)
            entry = self.manifest["chunks"][i]
            entry["state"] = "skipped"
            for key in ("rows", "seconds", "parts"):
                entry.pop(key, None)
        self.manifest["stop"] = stop
        self.save()

    def finished(self, rounds: int, files) -> None:
        """Mark the run finished, with its number of rounds and the size and sha256 of the
        files made from the parts (``files``: paths in the folder)."""
        self.manifest["finished"] = True
        self.manifest["rounds"] = rounds
        self.manifest["files"] = {p.name: results.digest(p) for p in files if p is not None}
        self.save()

    def save(self) -> None:
        """Write the manifest (atomically), with its count of units done and the time."""
        manifest = self.manifest
        done = [c for c in manifest["chunks"] if c["state"] == "done"]
        unit = "rounds" if manifest["config"]["mode"] == "rounds" else "matches"
        manifest["units_done"] = sum(c[unit] for c in done)
        manifest["updated"] = _now()
        results.write_json_atomic(manifest, self.path / results.MANIFEST_FILE)


def run_id(config: dict) -> str:
    """A short hash of a run's configuration: the parts of a run carry it."""
    return hashlib.sha256(json.dumps(config, sort_keys=True).encode()).hexdigest()[:16]


def _listing(rels: list[str], at_most: int = 3) -> str:
    shown = ", ".join(rels[:at_most])
    return shown + (f" and {len(rels) - at_most} more" if len(rels) > at_most else "")


# --- readers ---------------------------------------------------------------------------------

def _rerun(manifest: dict, run_dir: Path) -> str:
    """The advice to rerun the run's command, with ``--out`` naming the folder read: a run
    folder copied or moved elsewhere is resumed where it is now, not where it was made."""
    command = manifest.get("command")
    if not command:
        return "rerun the run's tournament command"
    try:
        words = shlex.split(command)
        at = words.index("--out") + 1
        if at < len(words) and Path(words[at]).resolve() != Path(run_dir).resolve():
            words[at] = str(Path(run_dir).resolve())
            command = shlex.join(words)
    except ValueError:                  # not a command kc-sim wrote: shown as it is
        pass
    return f"rerun the run's command ({command})"


def verified_parts(run_dir, which: str = results.ROUNDS_DIR) -> list[Path]:
    """The parts of ``which`` of the chunks done in a run folder, in chunk order, each
    checked against the size and sha256 in its manifest: a part damaged or missing, or
    one a finished run does not list (foreign), is a :class:`UserError` naming it.
    Parts of a run written before kc-sim recorded hashes, and a folder of parts made by
    hand (no manifest, no part naming its run), are taken as they are."""
    run_dir = Path(run_dir)
    on_disk = sorted((run_dir / which).glob("part-*.parquet"))
    if not (run_dir / results.MANIFEST_FILE).exists():
        # parts made by hand are read as they are; a kc-sim run's parts need their manifest
        if any(results.chunk_identity(p) is not None for p in on_disk):
            raise UserError(f"{run_dir} has no {results.MANIFEST_FILE}, so its parts cannot be checked; rerun the "
                            "command that made the run to rebuild it from its parts")
        return on_disk
    manifest = results.read_manifest(run_dir)
    expected: dict[str, dict | None] = {}      # parts of the chunks done -> recorded digest (None: not recorded)
    for c in manifest["chunks"]:
        if not isinstance(c, dict) or c.get("state") != "done":
            continue
        name = f"{which}/{results.part_name(int(c.get('index', -1)))}"
        recorded = c.get("parts")
        if isinstance(recorded, dict):
            if name in recorded:
                expected[name] = recorded[name]
        elif (run_dir / name).exists():        # an older run: no digests recorded
            expected[name] = None
    present = {f"{which}/{p.name}" for p in on_disk}
    missing = sorted(set(expected) - present)
    if missing:
        raise UserError(f"{run_dir}: {_listing(missing)} {'is' if len(missing) == 1 else 'are'} missing; "
                        f"{_rerun(manifest, run_dir)} to play {'its' if len(missing) == 1 else 'their'} chunk again")
    extra = sorted(present - set(expected))
    if extra and manifest.get("finished"):
        raise UserError(f"{run_dir}: {_listing(extra)} {'is' if len(extra) == 1 else 'are'} not part of this run "
                        f"({results.MANIFEST_FILE} does not list {'it' if len(extra) == 1 else 'them'}); remove "
                        f"{'it' if len(extra) == 1 else 'them'}, or {_rerun(manifest, run_dir)}")
    out = []
    for p in on_disk:
        name = f"{which}/{p.name}"
        if name not in expected:
            continue                            # a chunk still being played
        want = expected[name]
        if want is not None and results.digest(p) != want:
            raise UserError(f"{run_dir}: {name} is damaged (its size or sha256 is not what {results.MANIFEST_FILE} "
                            f"recorded when it was written); {_rerun(manifest, run_dir)} to play that chunk again")
        out.append(p)
    return out


def verified_file(run_dir, name: str) -> Path:
    """A file made from a run's parts (``summary.parquet``, ``matches.parquet``), checked
    against the size and sha256 in the manifest when it recorded them."""
    run_dir = Path(run_dir)
    path = run_dir / name
    if (run_dir / results.MANIFEST_FILE).exists():
        manifest = results.read_manifest(run_dir)
        want = (manifest.get("files") or {}).get(name)
        if want is not None and path.exists() and results.digest(path) != want:
            raise UserError(f"{run_dir}: {name} is damaged (its size or sha256 is not what {results.MANIFEST_FILE} "
                            f"recorded); {_rerun(manifest, run_dir)} to write it again")
    return path
