"""The experiment file: its TOML schema, checked key by key into an :class:`Experiment`.

Every check raises a :class:`~kc_sim.errors.UserError` naming the file, the run and the
key, so a typo is reported before any run is played. ``RunSpec.scaled`` gives a run's
size under ``--scale``.

The schema::

    name = "king_first"                 # required: letters, digits, _ - and . (not first); the folder name
    question = "Does king-first beat greedy, and by how much?"    # required
    notes = "free text (markdown) printed under the question"     # optional
    seed = 2024                         # optional: default seed of every run (else 0)

    [compare]                           # required: what findings.md reports
    kind = "head_to_head"               # seats | head_to_head | rules | stopping
    agent = "king-first"                # head_to_head only: the agent tested ...
    opponent = "greedy"                 # ... against this one (or a list of opponents)
    pairs = [["greedy", "random"]]      # head_to_head only: more (agent, opponent) pairs
    aa = ["aa-1pp"]                     # stopping only: the A/A runs (agents known to be equal);
                                        # default: runs whose agents are one agent (``random:1``
                                        # and ``random:2`` count as one: a ``:N`` salt is ignored)

    [defaults]                          # optional: keys every run takes unless it sets them
    rounds = 1_000_000

    [[runs]]                            # one or more tournament runs
    name = "classic-2p"                 # required, unique: the run's folder in the output folder
    agents = ["king-first", "greedy"]   # list, "a,b" text, or one name (repeated for every seat)
    players = 2                         # optional (default: as many as agents, at most 4)
    rules = "classic"                   # optional (default classic)
    rounds = 1_000_000                  # or matches = N (whole matches under the match switch)
    seed = 7                            # optional (default: the file's seed)
    chunk_size = 50_000                 # optional
    seating = "rotations"               # optional (default balanced): the schedule's seatings
    baseline = "other-run"              # rules only: the run to compare with (default: the first
                                        # earlier run with the same agents, players and mode)

    # early stopping (kc_sim.tournament.stopping), instead of rounds / matches:
    until = "decided"                   # stop once every pair of agents is decided
    max_rounds = 2_000_000              # required with until: the most rounds the run may play
    precision = "0.5pp"                 # optional: a pair is also decided at this half-width
    alpha = 0.05                        # optional (default 0.05)
    repeat = 200                        # stopping only: play the run 200 times, seeds seed ..
                                        # seed + 199, in folders <run>/r000 .. <run>/r199

A run's own size key (``rounds``, ``matches`` or ``max_rounds``) replaces the size keys of
``[defaults]``. ``rounds`` (or ``matches``) together with ``until`` is refused: with
``until`` the size is ``max_rounds``, the most the run may play. A run with ``repeat`` is N
runs with consecutive seeds, each in its own folder and each resumable like any run.
``--scale s`` multiplies ``rounds``, ``matches`` and ``max_rounds``, and ``repeat`` too (but
keeps at least 2 repeats of a repeated run).
"""

from __future__ import annotations

import dataclasses
import math
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from kc_sim.errors import UserError
from kc_sim.play.agents.registry import parse_agent_list
from kc_sim.stats.sequential import parse_precision
from kc_sim.tournament.options import SEATING_KINDS, UNTIL_CHOICES, TournamentOptions

KINDS = ("seats", "head_to_head", "rules", "stopping")
#: the most repeats of one run (each is a run folder)
REPEAT_MAX = 10_000
#: keeps at least this many repeats of a repeated run under --scale (a spread needs two)
REPEAT_MIN_SCALED = 2
EXPERIMENTS_DIR = Path("results") / "experiments"
_TOP_KEYS = {"name", "question", "notes", "seed", "compare", "defaults", "runs"}
_RUN_KEYS = {"name", "agents", "players", "rules", "rounds", "matches", "seed", "chunk_size", "baseline",
             "until", "max_rounds", "precision", "alpha", "repeat", "seating"}
_SIZE_KEYS = {"rounds", "matches", "max_rounds"}
_UNTIL_KEYS = ("max_rounds", "precision", "alpha")
_DEFAULT_KEYS = _RUN_KEYS - {"name", "baseline"}
_COMPARE_KEYS = {"seats": {"kind"}, "head_to_head": {"kind", "agent", "opponent", "pairs"}, "rules": {"kind"},
                 "stopping": {"kind", "aa"}}
_SALT = re.compile(r":\d+$")      # random:1 -> random: the agent behind a salted stream
_NAME = re.compile(r"^[A-Za-z0-9_-][A-Za-z0-9_.-]*$")      # a folder name; never "." or ".."


@dataclass(frozen=True)
class RunSpec:
    """One tournament run of an experiment."""

    name: str
    agents: tuple[str, ...]
    players: int | None
    rules: str
    rounds: int | None        # with until: max_rounds, the most rounds the run may play
    matches: int | None
    seed: int
    chunk_size: int | None = None
    baseline: str | None = None
    until: str | None = None           # "decided": stop early (kc_sim.tournament.stopping)
    precision: float | None = None     # with until: half-width that decides a pair (score units)
    alpha: float | None = None         # with until: error level (None: the default 0.05)
    repeat: int | None = None          # play the run this many times, seeds seed, seed + 1, ...
    seating: str = "balanced"          # the schedule's seatings (kc_sim.tournament.schedule)

    #: ``rounds`` or ``matches``, and the run's size (with ``until``: the most rounds it may
    #: play): the rule of the tournament's options, over the same two fields
    mode = TournamentOptions.mode
    count = TournamentOptions.count

    @property
    def until_args(self) -> dict:
        """The early-stopping arguments of :meth:`kc_sim.tournament.options.TournamentOptions.create`."""
        return {"until": self.until, "precision": self.precision, "alpha": self.alpha}

    def scaled(self, scale: float) -> "RunSpec":
        """The run with its size multiplied by ``scale`` (at least one deal), and its
        repeats too (at least :data:`REPEAT_MIN_SCALED` of a repeated run)."""
        if scale == 1:
            return self
        k = self.players or min(len(self.agents), 4)
        n = max(k, int(math.ceil(self.count * scale)))
        changes = {self.mode: n}
        if self.repeat is not None:
            changes["repeat"] = max(min(self.repeat, REPEAT_MIN_SCALED), int(math.ceil(self.repeat * scale)))
        return dataclasses.replace(self, **changes)

    def folders(self, folder: Path) -> list[tuple[Path, int]]:
        """``(run folder, seed)`` of every play of the run: the folder itself, or with
        ``repeat = N`` the folders ``folder/r000 .. folder/r<N-1>`` with seeds ``seed ..
        seed + N - 1`` (three digits at least, so that more repeats later reuse the first)."""
        folder = Path(folder)
        if self.repeat is None:
            return [(folder, self.seed)]
        return [(folder / repeat_name(i), self.seed + i) for i in range(self.repeat)]


def repeat_name(i: int) -> str:
    """The folder of repeat ``i`` (from 0) of a repeated run: ``r000``, ``r001``, ..."""
    return f"r{i:03d}"


@dataclass(frozen=True)
class Experiment:
    name: str
    question: str
    kind: str
    runs: tuple[RunSpec, ...]
    notes: str = ""
    pairs: tuple[tuple[str, str], ...] = ()   # head_to_head: (agent, opponent) pairs
    source: Path | None = None
    aa: tuple[str, ...] = ()                  # stopping: the A/A runs (agents known to be equal)


# --- checking the file ------------------------------------------------------------------

def _bad(where: str, what: str) -> UserError:
    return UserError(f"{where}: {what}")


def _int_key(where: str, d: dict, key: str, minimum: int) -> int | None:
    if key not in d:
        return None
    v = d[key]
    if isinstance(v, bool) or not isinstance(v, int) or v < minimum:
        raise _bad(where, f"{key} must be a whole number >= {minimum}, got {v!r}")
    return v


def _agents(where: str, value, players) -> tuple[str, ...]:
    if isinstance(value, str):
        names = parse_agent_list(value, f"{where}: agents") if value.strip() else []
    elif isinstance(value, list) and all(isinstance(a, str) for a in value):
        names = [a.strip() for a in value if a.strip()]
    else:
        raise _bad(where, f"agents must be a list of names or a comma-separated text, got {value!r}")
    if not names:
        raise _bad(where, "agents is empty: give at least one agent name")
    if len(names) == 1:
        if players is None:
            raise _bad(where, f"agents names one agent ({names[0]}): give players = K for self-play, "
                       "or two or more agents")
        names = names * players
    return tuple(names)


def _check_keys(where: str, table: dict, allowed, what: str = "") -> None:
    unknown = set(table) - set(allowed)
    if unknown:
        raise _bad(where, f"{what}unknown key(s) {', '.join(sorted(unknown))}: expected {', '.join(sorted(allowed))}")


def _header(where: str, data: dict) -> tuple[str, str, str, int]:
    """name, question, notes and seed of the file."""
    name = data.get("name")
    if not isinstance(name, str) or not _NAME.match(name):
        raise _bad(where, f"name must be a text of letters, digits, '_', '-' or '.', got {name!r}")
    question = data.get("question")
    if not isinstance(question, str) or not question.strip():
        raise _bad(where, "question is missing: say in one sentence what the experiment answers")
    notes = data.get("notes", "")
    if not isinstance(notes, str):
        raise _bad(where, "notes must be a text")
    seed = _int_key(where, data, "seed", 0)
    return name, question.strip(), notes.strip(), 0 if seed is None else seed


def _compare(where: str, data: dict) -> tuple[str, list, dict]:
    """The ``[compare]`` table: its kind, for head_to_head the (agent, opponent) pairs, and
    the table itself."""
    compare = data.get("compare")
    if isinstance(compare, str):
        compare = {"kind": compare}
    if not isinstance(compare, dict) or compare.get("kind") not in KINDS:
        got = compare.get("kind") if isinstance(compare, dict) else compare
        raise _bad(where, f"[compare] kind must be one of {', '.join(KINDS)}, got {got!r}")
    kind = compare["kind"]
    unknown = set(compare) - _COMPARE_KEYS[kind]
    if unknown:
        raise _bad(where, f"[compare] unknown key(s) {', '.join(sorted(unknown))} for kind {kind}: "
                   f"expected {', '.join(sorted(_COMPARE_KEYS[kind]))}")
    return kind, _pairs(where, compare) if kind == "head_to_head" else [], compare


def _pairs(where: str, compare: dict) -> list:
    """head_to_head: ``agent`` against ``opponent`` (one or a list), plus ``pairs``."""
    pairs = []
    agent, opponent = compare.get("agent"), compare.get("opponent")
    if agent is not None or opponent is not None:
        opponents = [opponent] if isinstance(opponent, str) else opponent
        if not isinstance(agent, str) or not isinstance(opponents, list) or not opponents:
            raise _bad(where, "[compare] head_to_head needs agent = \"A\" and opponent = \"B\" (or a list "
                       f"of opponents), got agent={agent!r}, opponent={opponent!r}")
        pairs += [(agent, o) for o in opponents]
    extra = compare.get("pairs", [])
    if not isinstance(extra, list) or not all(isinstance(p, list) and len(p) == 2 for p in extra):
        raise _bad(where, f"[compare] pairs must be a list of [\"A\", \"B\"] pairs, got {extra!r}")
    pairs += [tuple(p) for p in extra]
    if not pairs or not all(isinstance(x, str) for p in pairs for x in p) or any(a == b for a, b in pairs):
        raise _bad(where, "[compare] head_to_head needs agent = \"A\" and opponent = \"B\", or pairs = "
                   f"[[\"A\", \"B\"], ...], each with two different agents; got {pairs!r}")
    return pairs


def _defaults(where: str, data: dict) -> dict:
    defaults = data.get("defaults", {})
    if not isinstance(defaults, dict):
        raise _bad(where, "[defaults] must be a table")
    _check_keys(where, defaults, _DEFAULT_KEYS, "[defaults] ")
    return defaults


def _run(where: str, i: int, raw: dict, defaults: dict, seed: int, names: set, kind: str) -> RunSpec:
    """One ``[[runs]]`` table (number ``i``), its defaults filled in; adds its name to ``names``."""
    rw = f"{where}: run {i + 1}"
    _check_keys(rw, raw, _RUN_KEYS)
    d = {**defaults, **raw}
    if _SIZE_KEYS & raw.keys():               # the run's own size replaces the defaults' size
        for key in _SIZE_KEYS - raw.keys():
            d.pop(key, None)
    rname = d.get("name")
    if not isinstance(rname, str) or not _NAME.match(rname):
        raise _bad(rw, f"name must be a text of letters, digits, '_', '-' or '.', got {rname!r}")
    rw = f"{where}: run {rname!r}"
    if rname in names:
        raise _bad(rw, "two runs have this name; run names must be unique")
    names.add(rname)
    players = _int_key(rw, d, "players", 2)
    if "agents" not in d:
        raise _bad(rw, "agents is missing")
    agents = _agents(rw, d["agents"], players)
    rules = d.get("rules", "classic")
    if not isinstance(rules, str):
        raise _bad(rw, f"rules must be a text such as \"classic,draw=start\", got {rules!r}")
    rounds, matches = _int_key(rw, d, "rounds", 1), _int_key(rw, d, "matches", 1)
    until, precision, alpha = _until(rw, d, kind)
    if until is not None:
        rounds = _int_key(rw, d, "max_rounds", 1)
    elif (rounds is None) == (matches is None):
        raise _bad(rw, "give exactly one of rounds = N or matches = N")
    baseline = d.get("baseline")
    if baseline is not None and not isinstance(baseline, str):
        raise _bad(rw, "baseline must name another run")
    rseed = _int_key(rw, d, "seed", 0)
    rseed = seed if rseed is None else rseed
    repeat = _repeat(rw, d, kind, rseed)
    seating = d.get("seating", "balanced")
    if seating not in SEATING_KINDS:
        raise _bad(rw, f"seating must be one of {', '.join(SEATING_KINDS)}, got {seating!r}")
    return RunSpec(rname, agents, players, rules, rounds, matches, rseed, _int_key(rw, d, "chunk_size", 1), baseline,
                   until, precision, alpha, repeat, seating)


def _until(rw: str, d: dict, kind: str) -> tuple[str | None, float | None, float | None]:
    """``until``, ``precision`` and ``alpha`` of a run, checked (with ``max_rounds`` and
    against ``rounds`` / ``matches``)."""
    until = d.get("until")
    if until is None:
        given = [k for k in _UNTIL_KEYS if k in d]
        if given:
            raise _bad(rw, f"{', '.join(given)} set without until: add until = \"decided\" to stop early, "
                       "or give rounds = N for a fixed-size run")
        if kind == "stopping":
            raise _bad(rw, "a stopping experiment compares runs that stop early: set until = \"decided\" "
                       "and max_rounds = N")
        return None, None, None
    if until not in UNTIL_CHOICES:
        raise _bad(rw, f"until must be one of {', '.join(repr(c) for c in UNTIL_CHOICES)}, got {until!r}")
    for key in ("rounds", "matches"):
        if key in d:
            raise _bad(rw, f"{key} and until both set: with until = \"decided\" give max_rounds = N "
                       f"(the most rounds the run may play) instead of {key}")
    if "max_rounds" not in d:
        raise _bad(rw, "until = \"decided\" needs max_rounds = N: the most rounds the run may play")
    precision = d.get("precision")
    if precision is not None:
        if isinstance(precision, bool) or not isinstance(precision, (str, int, float)):
            raise _bad(rw, f"precision must be a text such as \"0.5pp\" or a number such as 0.005, got {precision!r}")
        try:
            precision = parse_precision(str(precision))
        except UserError:
            raise _bad(rw, f"precision must be a half-width such as \"0.5pp\" or 0.005 (between 0 and 1), "
                       f"got {precision!r}") from None
    alpha = d.get("alpha")
    if alpha is not None and (isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < 1):
        raise _bad(rw, f"alpha must be a number between 0 and 1 such as 0.05, got {alpha!r}")
    return until, precision, None if alpha is None else float(alpha)


def _repeat(rw: str, d: dict, kind: str, seed: int) -> int | None:
    """``repeat = N``: 1 to :data:`REPEAT_MAX`, in a stopping experiment only, seeds in range."""
    repeat = _int_key(rw, d, "repeat", 1)
    if repeat is None:
        return None
    if repeat > REPEAT_MAX:
        raise _bad(rw, f"repeat must be a whole number from 1 to {REPEAT_MAX:,}, got {repeat!r}")
    if kind != "stopping":
        raise _bad(rw, f"repeat is for [compare] kind = \"stopping\" (it reads each repeat's stop); "
                   f"kind {kind} reads one folder per run")
    if seed + repeat - 1 >= 2 ** 63:
        raise _bad(rw, f"seeds {seed} .. {seed + repeat - 1} of the repeats go beyond 2**63 - 1: give a lower seed")
    return repeat


def _runs(where: str, data: dict, defaults: dict, seed: int, kind: str) -> list[RunSpec]:
    runs_raw = data.get("runs")
    if not isinstance(runs_raw, list) or not runs_raw or not all(isinstance(r, dict) for r in runs_raw):
        raise _bad(where, "no runs: add one or more [[runs]] tables")
    names: set = set()
    runs = [_run(where, i, raw, defaults, seed, names, kind) for i, raw in enumerate(runs_raw)]
    for r in runs:
        if r.baseline is not None and (r.baseline not in names or r.baseline == r.name):
            raise _bad(where, f"run {r.name!r}: baseline {r.baseline!r} is not another run of this file "
                       f"(runs: {', '.join(sorted(names))})")
    return runs


def parse_experiment(data: dict, source: Path | None = None) -> Experiment:
    """Check a parsed TOML document against the schema (see the module docstring)."""
    where = str(source) if source is not None else "experiment"
    if not isinstance(data, dict):
        raise _bad(where, "expected a TOML table at the top level")
    _check_keys(where, data, _TOP_KEYS)
    name, question, notes, seed = _header(where, data)
    kind, pairs, compare = _compare(where, data)
    runs = _runs(where, data, _defaults(where, data), seed, kind)
    aa = _aa_runs(where, compare, runs) if kind == "stopping" else ()
    return Experiment(name, question, kind, tuple(runs), notes, tuple(pairs), source, aa)


def is_one_agent(agents) -> bool:
    """Whether every agent of a line-up is the same agent (``random:1`` and ``random:2``
    are: a ``:N`` salt gives another random stream, not another policy)."""
    return len({_SALT.sub("", a) for a in agents}) == 1


def _aa_runs(where: str, compare: dict, runs) -> tuple[str, ...]:
    """stopping: the A/A runs, from ``[compare] aa`` (run names) or else the runs of one agent."""
    names = [r.name for r in runs]
    if "aa" not in compare:
        return tuple(r.name for r in runs if is_one_agent(r.agents))
    aa = compare["aa"]
    if isinstance(aa, str):
        aa = [aa]
    if not isinstance(aa, list) or not all(isinstance(a, str) for a in aa):
        raise _bad(where, f"[compare] aa must be a list of run names, got {aa!r}")
    unknown = [a for a in aa if a not in names]
    if unknown:
        raise _bad(where, f"[compare] aa names {', '.join(repr(a) for a in unknown)}, not a run of this file "
                   f"(runs: {', '.join(names)})")
    return tuple(a for a in names if a in aa)


def load_experiment(path) -> Experiment:
    """Read and check an experiment file; a missing file or a malformed one is a UserError."""
    path = Path(path)
    if not path.is_file():
        raise UserError(f"experiment file {path} does not exist" + (" (it is a folder)" if path.is_dir() else ""))
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as e:
        raise UserError(f"{path}: not valid TOML: {e}") from None
    except (OSError, UnicodeDecodeError) as e:
        raise UserError(f"cannot read {path}: {e}") from None
    return parse_experiment(data, path)


def default_out(exp: Experiment, scale: float = 1.0) -> Path:
    name = exp.name if scale == 1 else f"{exp.name}_scale{scale:g}"
    return EXPERIMENTS_DIR / name
