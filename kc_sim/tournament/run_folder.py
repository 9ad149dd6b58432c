"""The run folder of a tournament: refusing a folder of another run, the manifest, resume.

A run folder holds one run: its ``manifest.json`` stores the configuration of
:class:`~kc_sim.tournament.plan.Plan` and the state of every chunk. Reopening a folder with
the same configuration keeps the chunks done whose part files exist and plays the rest;
a different configuration, or a folder that is not a run folder, is refused with a
:class:`~kc_sim.errors.UserError` before anything is played.
"""

from __future__ import annotations

import sys
import time
from importlib import metadata
from pathlib import Path

from kc_sim.errors import UserError
from kc_sim.tournament import results
from kc_sim.tournament.plan import FORMAT, Plan


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


def open_run_folder(plan: Plan, old: dict | None, command: str | None) -> dict:
    """Create or reopen the run folder and write its manifest: chunks listed done in the
    old manifest whose part files exist stay done, every other chunk is pending."""
    out = plan.out
    chunks = plan.schedule.chunks()
    done = set()
    if old:
        for c in old.get("chunks", []):
            if c.get("state") == "done" and _part_files_exist(plan, c["index"]):
                done.add(c["index"])
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
                    "file": f"{results.ROUNDS_DIR}/{results.part_name(c.index)}"} for c in chunks],
    }
    if old:
        for c, oc in zip(manifest["chunks"], old.get("chunks", [])):
            if c["state"] == "done" and "rows" in oc:
                c["rows"], c["seconds"] = oc["rows"], oc.get("seconds")
    try:
        (out / results.ROUNDS_DIR).mkdir(parents=True, exist_ok=True)
        if plan.mode == "matches":
            (out / results.MATCHES_DIR).mkdir(exist_ok=True)
        results.clean_temporaries(out)
        save_manifest(manifest, out)
    except OSError as e:
        raise UserError(f"cannot write to {out}: {e.strerror or e}") from None
    return manifest


def _part_files_exist(plan: Plan, index: int) -> bool:
    ok = (plan.out / results.ROUNDS_DIR / results.part_name(index)).exists()
    if plan.mode == "matches":
        ok = ok and (plan.out / results.MATCHES_DIR / results.part_name(index)).exists()
    return ok


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


def save_manifest(manifest: dict, out: Path) -> None:
    """Write the manifest (atomically), with its count of units done and the time."""
    done = [c for c in manifest["chunks"] if c["state"] == "done"]
    unit = "rounds" if manifest["config"]["mode"] == "rounds" else "matches"
    manifest["units_done"] = sum(c[unit] for c in done)
    manifest["updated"] = _now()
    results.write_json_atomic(manifest, out / results.MANIFEST_FILE)
