"""``manifest.json``, typed: what a run is (its configuration and schedule) and how far it got.

The manifest is the one file that says what a run folder holds (docs/formats.md,
``manifest.json``). :class:`Manifest` is its content as typed objects: the configuration
(:class:`RunConfig`, what a rerun must match to resume), the schedule (:class:`ScheduleInfo`),
one :class:`ChunkEntry` per chunk, and, once known, the stop of an ``--until`` run, the
rounds and the digests of the files made from the parts. :func:`read_manifest` reads and
checks one (a file that is not a manifest is a :class:`~kc_sim.errors.UserError` saying how
to get it back); :meth:`Manifest.to_dict` gives the JSON object the folder writes, key for
key as kc-sim has always written it, so run folders of earlier versions keep resuming.

Readers are lenient where older kc-sims wrote less (a run without a schedule or without
part digests): a missing field is None or empty, never an error.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

from kc_sim.errors import UserError
from kc_sim.runs.layout import MANIFEST_FILE

__all__ = ["DEFAULT_ALPHA", "FORMAT", "ChunkEntry", "Manifest", "PairStop", "RunConfig", "ScheduleInfo", "StopInfo",
           "Until", "read_manifest", "read_manifest_json", "run_id"]

FORMAT = "kc-sim/tournament/2"
#: the error level of ``--until decided`` when ``--alpha`` is not given (all pairs together)
DEFAULT_ALPHA = 0.05
_REBUILD = ("rerun the command that made the run (the same kc-sim tournament ... --out) to rebuild it from the "
            "finished parts")


@dataclass(frozen=True)
class Until:
    """What ``--until decided`` was asked with (``config["until"]``): the error level over all
    pairs together, and the half-width that also decides a pair (None: only a separation)."""

    alpha: float = DEFAULT_ALPHA
    precision: float | None = None

    def to_config(self) -> dict:
        return {"until": "decided", "alpha": self.alpha, "precision": self.precision}

    @classmethod
    def from_config(cls, d) -> Until | None:
        if not isinstance(d, dict):
            return None
        precision = d.get("precision")
        return cls(float(d.get("alpha") or DEFAULT_ALPHA), None if precision is None else float(precision))


@dataclass(frozen=True)
class PairStop:
    """One pair at the stop of an ``--until`` run: its deals, the confidence sequence's mean
    and bounds, and its status (``separated``, ``precise`` or ``open``)."""

    agents: tuple[str, str]
    deals: int
    mean: float
    lo: float
    hi: float
    status: str

    def to_dict(self) -> dict:
        return {"agents": list(self.agents), "deals": self.deals, "mean": self.mean, "lo": self.lo, "hi": self.hi,
                "status": self.status}


@dataclass(frozen=True)
class StopInfo:
    """Why and where an ``--until`` run stopped (``manifest["stop"]``)."""

    blocks: int
    deals: int
    reason: str
    pairs: tuple[PairStop, ...]

    def to_dict(self) -> dict:
        return {"blocks": self.blocks, "deals": self.deals, "reason": self.reason,
                "pairs": [p.to_dict() for p in self.pairs]}

    @classmethod
    def from_dict(cls, d) -> StopInfo | None:
        if not isinstance(d, dict):
            return None
        try:
            pairs = tuple(PairStop(tuple(str(a) for a in p["agents"]), int(p["deals"]), float(p["mean"]),
                                   float(p["lo"]), float(p["hi"]), str(p["status"])) for p in d.get("pairs") or ())
            return cls(int(d.get("blocks") or 0), int(d.get("deals") or 0), str(d.get("reason", "")), pairs)
        except (KeyError, TypeError, ValueError):
            return None


@dataclass(frozen=True)
class RunConfig:
    """The configuration of a run (``manifest["config"]``): what a rerun must match to resume."""

    mode: str                                   # "rounds" or "matches"
    agents: tuple[str, ...]                     # load names, sorted by name
    labels: tuple[str, ...]                     # unique display names by agent index
    players: int
    requested: int                              # rounds or matches asked for (with --until, the most)
    rules: str                                  # RuleSet.spec()
    seed: int
    chunk_size: int
    lineups: tuple[tuple[int, ...], ...]
    seating: str = "balanced"
    until: Until | None = None
    format: str = FORMAT
    luck: bool = False                          # parts hold the draw control variates (schema.LUCK_COLUMNS)

    def to_dict(self) -> dict:
        d = {"format": self.format, "mode": self.mode, "agents": list(self.agents), "labels": list(self.labels),
             "players": self.players, "requested": self.requested, "rules": self.rules, "seed": self.seed,
             "chunk_size": self.chunk_size, "lineups": [list(x) for x in self.lineups], "seating": self.seating,
             "until": self.until.to_config() if self.until is not None else None}
        return d | {"luck": True} if self.luck else d      # only when on: the manifests of other runs unchanged

    @classmethod
    def from_dict(cls, d: dict) -> RunConfig:
        """The configuration of a manifest (older runs: missing fields take their defaults)."""
        return cls(mode=str(d.get("mode", "rounds")), agents=tuple(str(a) for a in d.get("agents") or ()),
                   labels=tuple(str(x) for x in d["labels"]), players=int(d["players"]),
                   requested=int(d.get("requested") or 0), rules=str(d.get("rules", "classic")),
                   seed=int(d.get("seed", 0)), chunk_size=int(d.get("chunk_size") or 0),
                   lineups=tuple(tuple(int(i) for i in lu) for lu in d.get("lineups") or ()),
                   seating=str(d.get("seating", "rotations")),
                   until=Until.from_config(d.get("until")),
                   format=str(d.get("format", FORMAT)), luck=bool(d.get("luck", False)))

    @property
    def unit(self) -> str:
        """``round`` or ``match``."""
        return "round" if self.mode == "rounds" else "match"

    def run_id(self) -> str:
        """A short hash of the configuration: every part of the run names it (:data:`~kc_sim.runs.schema.CHUNK_KEY`)."""
        return run_id(self.to_dict())


def run_id(config: dict) -> str:
    """A short hash of a run's configuration (as the manifest stores it)."""
    return hashlib.sha256(json.dumps(config, sort_keys=True).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class ScheduleInfo:
    """The schedule as the manifest records it (``manifest["schedule"]``)."""

    players: int
    lineups: tuple[tuple[int, ...], ...]        # agent indices by line-up position
    seating: str                                # "balanced" or "rotations"
    seatings: tuple[tuple[int, ...], ...]       # seating q: line-up position q[s] sits in seat s
    groups_per_lineup: int                      # deals per line-up
    chunk_groups: int
    units: int                                  # rounds (or matches) scheduled
    chunks: int

    def to_dict(self) -> dict:
        return {"players": self.players, "lineups": [list(x) for x in self.lineups], "seating": self.seating,
                "seatings": [list(q) for q in self.seatings], "groups_per_lineup": self.groups_per_lineup,
                "chunk_groups": self.chunk_groups, "units": self.units, "chunks": self.chunks}

    @classmethod
    def from_dict(cls, d: dict) -> ScheduleInfo | None:
        """The schedule of a manifest, or None when it has none (an older run) or it is incomplete."""
        if not isinstance(d, dict) or not d:
            return None
        return cls(players=int(d.get("players") or 0),
                   lineups=tuple(tuple(int(i) for i in lu) for lu in d.get("lineups") or ()),
                   seating=str(d.get("seating", "rotations")),
                   seatings=tuple(tuple(int(i) for i in q) for q in d.get("seatings") or ()),
                   groups_per_lineup=int(d.get("groups_per_lineup") or 0), chunk_groups=int(d.get("chunk_groups") or 0),
                   units=int(d.get("units") or 0), chunks=int(d.get("chunks") or 0))


@dataclass
class ChunkEntry:
    """One chunk of the manifest: groups ``[start, stop)`` of line-up ``lineup``, ``units``
    rounds (or matches), its state (``pending``, ``done``, or ``skipped`` after an early
    stop) and, once done, its rows, seconds and each part's ``{"size", "sha256"}``."""

    index: int
    lineup: int
    groups: tuple[int, int]
    mode: str
    units: int
    state: str = "pending"
    file: str = ""
    rows: int | None = None
    seconds: float | None = None
    parts: dict | None = None                   # relative path -> {"size", "sha256"} (None: not recorded)

    @property
    def done(self) -> bool:
        return self.state == "done"

    def to_dict(self) -> dict:
        d = {"index": self.index, "lineup": self.lineup, "groups": list(self.groups), self.mode: self.units,
             "state": self.state, "file": self.file}
        for key in ("rows", "seconds", "parts"):
            value = getattr(self, key)
            if value is not None:
                d[key] = value
        return d

    @classmethod
    def from_dict(cls, d: dict, mode: str) -> ChunkEntry | None:
        """A chunk entry of a manifest; None for one that is not (it is then ignored, as a
        chunk never played)."""
        try:
            groups = d.get("groups") or (0, 0)
            parts = d.get("parts")
            return cls(index=int(d["index"]), lineup=int(d.get("lineup", 0)), groups=(int(groups[0]), int(groups[1])),
                       mode=mode, units=int(d.get(mode) or 0), state=str(d.get("state", "pending")),
                       file=str(d.get("file", "")), rows=None if d.get("rows") is None else int(d["rows"]),
                       seconds=d.get("seconds"), parts=parts if isinstance(parts, dict) else None)
        except (KeyError, TypeError, ValueError, IndexError, AttributeError):
            return None


@dataclass
class Manifest:
    """A run folder's ``manifest.json`` (module doc)."""

    config: RunConfig
    schedule: ScheduleInfo | None
    chunks: list[ChunkEntry]
    command: str | None = None
    versions: dict = field(default_factory=dict)
    created: str = ""
    updated: str = ""
    finished: bool = False
    units_done: int = 0
    stop: StopInfo | None = None                # with --until, once the rule stopped the run
    rounds: int | None = None                   # once finished
    files: dict | None = None                   # once finished: file name -> {"size", "sha256"}
    format: str = FORMAT
    #: the ``config`` object exactly as read (a rerun compares its own configuration with it)
    raw_config: dict | None = None

    @property
    def labels(self) -> list[str]:
        return list(self.config.labels)

    @property
    def mode(self) -> str:
        return self.config.mode

    @property
    def lineups(self) -> list[tuple[int, ...]]:
        """The line-ups: the schedule's, else the configuration's."""
        return list(self.schedule.lineups if self.schedule is not None and self.schedule.lineups else self.config.lineups)

    @property
    def groups_per_lineup(self) -> int | None:
        """Deals per line-up, when the schedule says it."""
        n = self.schedule.groups_per_lineup if self.schedule is not None else 0
        return n if n > 0 else None

    def done_chunks(self) -> list[ChunkEntry]:
        return [c for c in self.chunks if c.done]

    def config_dict(self) -> dict:
        """The configuration as read (or as made): what a rerun's configuration must equal."""
        return self.raw_config if self.raw_config is not None else self.config.to_dict()

    def to_dict(self) -> dict:
        """The JSON object of ``manifest.json``, keys in the order kc-sim writes them."""
        d = {"format": self.format, "command": self.command, "config": self.config_dict(),
             "schedule": self.schedule.to_dict() if self.schedule is not None else None,
             "versions": self.versions, "created": self.created, "updated": self.updated,
             "finished": self.finished, "units_done": self.units_done,
             "chunks": [c.to_dict() for c in self.chunks]}
        if self.stop is not None:
            d["stop"] = self.stop.to_dict()
        if self.rounds is not None:
            d["rounds"] = self.rounds
        if self.files is not None:
            d["files"] = self.files
        return d

    @classmethod
    def from_dict(cls, d: dict) -> Manifest:
        """A manifest from its JSON object, as :func:`read_manifest_json` returns it (a
        ``config`` object and a ``chunks`` list, checked there); ValueError when its
        configuration cannot be read."""
        config, chunks = d["config"], d["chunks"]
        try:
            cfg = RunConfig.from_dict(config)
        except (KeyError, TypeError, ValueError) as e:
            raise ValueError(e) from None
        entries = [ChunkEntry.from_dict(c, cfg.mode) if isinstance(c, dict) else None for c in chunks]
        files = d.get("files")
        return cls(config=cfg, schedule=ScheduleInfo.from_dict(d.get("schedule") or {}),
                   chunks=[c for c in entries if c is not None], command=d.get("command"),
                   versions=d.get("versions") if isinstance(d.get("versions"), dict) else {},
                   created=str(d.get("created", "")), updated=str(d.get("updated", "")),
                   finished=bool(d.get("finished", False)), units_done=int(d.get("units_done") or 0),
                   stop=StopInfo.from_dict(d.get("stop")),
                   rounds=None if d.get("rounds") is None else int(d["rounds"]),
                   files=files if isinstance(files, dict) else None, format=str(d.get("format", FORMAT)),
                   raw_config=config)


def read_manifest_json(run_dir) -> dict:
    """``manifest.json`` as the JSON object it holds, checked to be a kc-sim manifest (an
    object with a ``config`` object and a ``chunks`` list); anything else is a
    :class:`~kc_sim.errors.UserError` saying how to get it back."""
    path = Path(run_dir) / MANIFEST_FILE
    text = path.read_text(encoding="utf-8", errors="replace")
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as e:       # RecursionError: nested deeper than json can parse
        why = "nested too deeply" if isinstance(e, RecursionError) else e
        raise UserError(f"{path} is damaged (not valid JSON: {why}); {_REBUILD}") from None
    if not isinstance(data, dict) or not isinstance(data.get("config"), dict) \
            or not isinstance(data.get("chunks"), list):
        raise UserError(f"{path} is damaged (not a kc-sim manifest: no config or chunks); {_REBUILD}")
    return data


def read_manifest(run_dir) -> Manifest:
    """The manifest of a run folder (:func:`read_manifest_json`, then typed)."""
    data = read_manifest_json(run_dir)
    try:
        return Manifest.from_dict(data)
    except ValueError as e:
        raise UserError(f"cannot read {Path(run_dir) / MANIFEST_FILE}: {e}") from None
