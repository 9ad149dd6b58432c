"""The run folder of a tournament as an object: refusing a folder of another run, the
manifest, storing chunks, resume.

A run folder holds one run: its ``manifest.json`` stores the configuration of
:class:`~kc_sim.tournament.plan.Plan` and the state of every chunk. :meth:`RunFolder.open`
reopens a folder with the same configuration keeping the chunks done whose part files
exist (the rest are played); a different configuration, or a folder that is not a run
folder, is refused with a :class:`~kc_sim.errors.UserError` before anything is played.
:meth:`RunFolder.store` writes a chunk's parts, then marks it done (in that order), so
after a crash every chunk listed done is complete.
"""

from __future__ import annotations

import sys
import time
from importlib import metadata

from kc_sim.errors import UserError
from kc_sim.tournament import results
from kc_sim.tournament.plan import FORMAT, Plan
from kc_sim.tournament.schema import matches_table, rounds_table

__all__ = ["RunFolder", "check_run_folder"]


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


def check_run_folder(plan: Plan) -> dict | None:
    """The manifest of the run already in ``plan.out`` (None for a new or empty folder).
    Refuses a folder holding a different run, or anything that is not a run folder."""
    out = plan.out
    if out.exists() and not out.is_dir():
        raise UserError(f"cannot use {out} as the run folder: it is a file")
    manifest_path = out / results.MANIFEST_FILE
    if manifest_path.exists():
        try:
            old = results.read_manifest(out)
        except (OSError, ValueError) as e:
            raise UserError(f"cannot read {manifest_path}: {e}; remove the folder or choose another --out") from None
        if old.get("config") != plan.config:
            diff = _describe_difference(old.get("config", {}), plan.config)
            raise UserError(f"{out} holds a different run ({diff}); rerun that command to resume it, "
                            "or choose another --out")
        return old
    if out.exists() and any(out.iterdir()):
        raise UserError(f"{out} exists and is not a tournament folder (no {results.MANIFEST_FILE}); "
                        "choose another --out")
    return None


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


class RunFolder:
    """The folder of one run while it is played: its plan, its manifest (a dict, written
    to ``manifest.json`` by :meth:`save`) and the chunks' parts. Open it with :meth:`open`."""

    def __init__(self, plan: Plan, manifest: dict):
        self.plan = plan
        self.path = plan.out
        self.manifest = manifest
        self.chunks = plan.schedule.chunks()

    # --- opening -----------------------------------------------------------------------

    @classmethod
    def open(cls, plan: Plan, command: str | None) -> RunFolder:
        """Create or reopen the run folder of ``plan`` and write its manifest: chunks listed
        done in the old manifest whose part files exist stay done, every other chunk is
        pending. Refuses a folder of another run (:func:`check_run_folder`)."""
        old = check_run_folder(plan)
        out = plan.out
        done = {c["index"] for c in (old or {}).get("chunks", [])
                if c.get("state") == "done" and _part_files_exist(plan, c["index"])}
        manifest = {
            "format": FORMAT,
            "command": command,
            "config": plan.config,
            "schedule": plan.schedule.to_dict(),
            "versions": _versions(),
            "created": (old or {}).get("created", _now()),
            "updated": _now(),
            "finished": False,
            "units_done": 0,
            "chunks": [{"index": c.index, "lineup": c.lineup, "groups": [c.start, c.stop],
                        plan.mode: plan.schedule.units_of(c),
                        "state": "done" if c.index in done else "pending",
                        "file": f"{results.ROUNDS_DIR}/{results.part_name(c.index)}"}
                       for c in plan.schedule.chunks()],
        }
        if old:
            for c, oc in zip(manifest["chunks"], old.get("chunks", [])):
                if c["state"] == "done" and "rows" in oc:
                    c["rows"], c["seconds"] = oc["rows"], oc.get("seconds")
        folder = cls(plan, manifest)
        try:
            (out / results.ROUNDS_DIR).mkdir(parents=True, exist_ok=True)
            if plan.mode == "matches":
                (out / results.MATCHES_DIR).mkdir(exist_ok=True)
            results.clean_temporaries(out)
            folder.save()
        except OSError as e:
            raise UserError(f"cannot write to {out}: {e.strerror or e}") from None
        return folder

    def close(self) -> None:
        """Done with the folder (the end of the run, or its failure)."""

    def __enter__(self) -> RunFolder:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # --- the chunks ----------------------------------------------------------------------

    def done(self, index: int) -> bool:
        return self.manifest["chunks"][index]["state"] == "done"

    def n_done(self) -> int:
        return sum(self.done(c.index) for c in self.chunks)

    def store(self, index: int, res: dict) -> None:
        """Write chunk ``index``'s parts from a worker's result, then mark it done in the
        manifest (in that order)."""
        plan, chunk = self.plan, self.chunks[index]
        lineup = plan.schedule.lineups[chunk.lineup]
        if res["matches"] is not None:
            t = matches_table(res["matches"], chunk.index, chunk.lineup, lineup, plan.schedule.seatings, plan.labels)
            results.write_atomic(t, self.path / results.MATCHES_DIR / results.part_name(chunk.index))
        t = rounds_table(res["rounds"], chunk.index, chunk.lineup, lineup, plan.schedule.seatings, plan.labels)
        results.write_atomic(t, self.path / results.ROUNDS_DIR / results.part_name(chunk.index),
                             {results.TALLY_KEY: res["tally"]})
        entry = self.manifest["chunks"][chunk.index]
        entry.update(state="done", rows=int(t.num_rows), seconds=round(res["seconds"], 3))
        self.save()

    def drop(self, indices, stop: dict) -> None:
        """Remove the parts of chunks ``indices`` (played beyond an early stop), mark them
        ``skipped`` and record the ``stop`` in the manifest."""
        for i in indices:
            for folder in (results.ROUNDS_DIR, results.MATCHES_DIR):
                (self.path / folder / results.part_name(i)).unlink(missing_ok=True)
            entry = self.manifest["chunks"][i]
            entry["state"] = "skipped"
            entry.pop("rows", None)
            entry.pop("seconds", None)
        self.manifest["stop"] = stop
        self.save()

    def finished(self, rounds: int) -> None:
        """Mark the run finished, with its number of rounds."""
        self.manifest["finished"] = True
        self.manifest["rounds"] = rounds
        self.save()

    def save(self) -> None:
        """Write the manifest (atomically), with its count of units done and the time."""
        manifest = self.manifest
        done = [c for c in manifest["chunks"] if c["state"] == "done"]
        unit = "rounds" if manifest["config"]["mode"] == "rounds" else "matches"
        manifest["units_done"] = sum(c[unit] for c in done)
        manifest["updated"] = _now()
        results.write_json_atomic(manifest, self.path / results.MANIFEST_FILE)


def _part_files_exist(plan: Plan, index: int) -> bool:
    ok = (plan.out / results.ROUNDS_DIR / results.part_name(index)).exists()
    if plan.mode == "matches":
        ok = ok and (plan.out / results.MATCHES_DIR / results.part_name(index)).exists()
    return ok
