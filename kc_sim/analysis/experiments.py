"""Experiments: one TOML file per question, run with ``kc-sim run experiments/NAME.toml``.

An experiment file names a question, lists the tournament runs that answer it and says
which comparison to report. ``kc-sim run`` plays every run (through
:func:`kc_sim.tournament.run.run_tournament`, so an interrupted experiment resumes where it
stopped), then writes ``findings.md`` with the numbers and their 95% intervals next to
the run folders (default ``results/experiments/<name>/``; with ``--scale`` other than 1,
``results/experiments/<name>_scale<s>/``, so a quick look never collides with the full run).

The schema::

    name = "king_first"                 # required: letters, digits, _ - and . (not first); the folder name
    question = "Does king-first beat greedy, and by how much?"    # required
    notes = "free text (markdown) printed under the question"     # optional
    seed = 2024                         # optional: default seed of every run (else 0)

    [compare]                           # required: what findings.md reports
    kind = "head_to_head"               # seats | head_to_head | rules
    agent = "king-first"                # head_to_head only: the agent tested ...
    opponent = "greedy"                 # ... against this one (or a list of opponents)
    pairs = [["greedy", "random"]]      # head_to_head only: more (agent, opponent) pairs

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
    baseline = "other-run"              # rules only: the run to compare with (default: the first
                                        # earlier run with the same agents, players and mode)

Comparisons (every interval is 95% and clustered by deal, see :mod:`kc_sim.analysis.plots`):

* ``seats``: per run, the win rate at each position in turn order (1 plays first), the
  first seat's edge over an equal share and over the last seat, and blocked rounds.
* ``head_to_head``: per run and pair of agents that met, over the rounds both sat in:
  both win rates and their difference, the mean penalty difference in the same round,
  how often the agent finishes ahead of the opponent and, with 2 players, the deals one
  agent won from both seats; a verdict per run and pair.
* ``rules``: per run, round length, blocked rounds, the first seat's edge, the mean
  penalty and each agent's win rate (and, for matches, rounds per match and match win
  rates); then each run's change from its baseline, paired by deal when both runs
  played the same deals (same seed, agents and size), with the share of rounds whose
  result (winner or block) changed.

``--scale s`` multiplies every run's ``rounds``/``matches`` (at least one rotation group).

The findings are computed from one streaming pass over each run's parquet parts
(:func:`kc_sim.analysis.scan.scan_run`: per-batch sums of every figure, batches of consecutive
deals), and, for a run paired with its baseline, one pass over both runs side by side
(:func:`kc_sim.analysis.scan.compare_runs`), so runs of any size fit in memory.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import math
import re
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from kc_sim.analysis.plots import fmt_pp as _pp
from kc_sim.analysis.plots import fmt_signed as _signed
from kc_sim.errors import UserError

KINDS = ("seats", "head_to_head", "rules")
FINDINGS_FILE = "findings.md"
EXPERIMENTS_DIR = Path("results") / "experiments"
_TOP_KEYS = {"name", "question", "notes", "seed", "compare", "defaults", "runs"}
_RUN_KEYS = {"name", "agents", "players", "rules", "rounds", "matches", "seed", "chunk_size", "baseline"}
_DEFAULT_KEYS = _RUN_KEYS - {"name", "baseline"}
_COMPARE_KEYS = {"seats": {"kind"}, "head_to_head": {"kind", "agent", "opponent", "pairs"}, "rules": {"kind"}}
_NAME = re.compile(r"^[A-Za-z0-9_-][A-Za-z0-9_.-]*$")      # a folder name; never "." or ".."


@dataclass(frozen=True)
class RunSpec:
    """One tournament run of an experiment."""

    name: str
    agents: tuple[str, ...]
    players: int | None
    rules: str
    rounds: int | None
    matches: int | None
    seed: int
    chunk_size: int | None = None
    baseline: str | None = None

    @property
    def mode(self) -> str:
        return "matches" if self.matches is not None else "rounds"

    @property
    def count(self) -> int:
        return self.matches if self.matches is not None else self.rounds

    def scaled(self, scale: float) -> "RunSpec":
        """The run with its size multiplied by ``scale`` (at least one rotation group)."""
        if scale == 1:
            return self
        k = self.players or min(len(self.agents), 4)
        n = max(k, int(math.ceil(self.count * scale)))
        return dataclasses.replace(self, **{self.mode: n})


@dataclass(frozen=True)
class Experiment:
    name: str
    question: str
    kind: str
    runs: tuple[RunSpec, ...]
    notes: str = ""
    pairs: tuple[tuple[str, str], ...] = ()   # head_to_head: (agent, opponent) pairs
    source: Path | None = None


@dataclass
class ExperimentResult:
    experiment: Experiment
    out: Path
    findings: Path
    markdown: str
    run_dirs: dict[str, Path] = field(default_factory=dict)
    seconds: float = 0.0


# --- reading the file --------------------------------------------------------------------

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
        names = [a.strip() for a in value.split(",") if a.strip()]
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


def parse_experiment(data: dict, source: Path | None = None) -> Experiment:
    """Check a parsed TOML document against the schema (see the module docstring)."""
    where = str(source) if source is not None else "experiment"
    if not isinstance(data, dict):
        raise _bad(where, "expected a TOML table at the top level")
    unknown = set(data) - _TOP_KEYS
    if unknown:
        raise _bad(where, f"unknown key(s) {', '.join(sorted(unknown))}: expected {', '.join(sorted(_TOP_KEYS))}")
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
    seed = 0 if seed is None else seed

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
    pairs = []
    if kind == "head_to_head":
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

    defaults = data.get("defaults", {})
    if not isinstance(defaults, dict):
        raise _bad(where, "[defaults] must be a table")
    unknown = set(defaults) - _DEFAULT_KEYS
    if unknown:
        raise _bad(where, f"[defaults] unknown key(s) {', '.join(sorted(unknown))}: expected "
                   f"{', '.join(sorted(_DEFAULT_KEYS))}")
    runs_raw = data.get("runs")
    if not isinstance(runs_raw, list) or not runs_raw or not all(isinstance(r, dict) for r in runs_raw):
        raise _bad(where, "no runs: add one or more [[runs]] tables")
    runs, names = [], set()
    for i, raw in enumerate(runs_raw):
        rw = f"{where}: run {i + 1}"
        unknown = set(raw) - _RUN_KEYS
        if unknown:
            raise UserError(f"{rw}: unknown key(s) {', '.join(sorted(unknown))}: expected "
                            f"{', '.join(sorted(_RUN_KEYS))}")
        d = {**defaults, **raw}
        if "rounds" in raw and "matches" not in raw:
            d.pop("matches", None)
        if "matches" in raw and "rounds" not in raw:
            d.pop("rounds", None)
        rname = d.get("name")
        if not isinstance(rname, str) or not _NAME.match(rname):
            raise UserError(f"{rw}: name must be a text of letters, digits, '_', '-' or '.', got {rname!r}")
        rw = f"{where}: run {rname!r}"
        if rname in names:
            raise UserError(f"{rw}: two runs have this name; run names must be unique")
        names.add(rname)
        players = _int_key(rw, d, "players", 2)
        if "agents" not in d:
            raise UserError(f"{rw}: agents is missing")
        agents = _agents(rw, d["agents"], players)
        rules = d.get("rules", "classic")
        if not isinstance(rules, str):
            raise UserError(f"{rw}: rules must be a text such as \"classic,draw=start\", got {rules!r}")
        rounds, matches = _int_key(rw, d, "rounds", 1), _int_key(rw, d, "matches", 1)
        if (rounds is None) == (matches is None):
            raise UserError(f"{rw}: give exactly one of rounds = N or matches = N")
        baseline = d.get("baseline")
        if baseline is not None and not isinstance(baseline, str):
            raise UserError(f"{rw}: baseline must name another run")
        rseed = _int_key(rw, d, "seed", 0)
        runs.append(RunSpec(rname, agents, players, rules, rounds, matches, seed if rseed is None else rseed,
                            _int_key(rw, d, "chunk_size", 1), baseline))
    for r in runs:
        if r.baseline is not None and (r.baseline not in names or r.baseline == r.name):
            raise UserError(f"{where}: run {r.name!r}: baseline {r.baseline!r} is not another run of this file "
                            f"(runs: {', '.join(sorted(names))})")
    return Experiment(name, question.strip(), kind, tuple(runs), notes.strip(), tuple(pairs), source)


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


# --- running -------------------------------------------------------------------------------

def _plan(spec: RunSpec, out: Path):
    from kc_sim.tournament.run import make_plan

    return make_plan(list(spec.agents), players=spec.players, rounds=spec.rounds, matches=spec.matches,
                     rules=spec.rules, seed=spec.seed, out=out, chunk_size=spec.chunk_size)


def run_experiment(exp, *, scale: float = 1.0, jobs=None, out=None, plots: bool = True, quiet: bool = True,
                   command: str | None = None, log=None) -> ExperimentResult:
    """Play every run of an experiment (resuming what is done), write ``findings.md``
    (and each run's figures with ``plots``); returns where everything went."""
    from kc_sim.tournament.run import check_run_folder, run_tournament

    if not isinstance(exp, Experiment):
        exp = load_experiment(exp)
    if not (isinstance(scale, (int, float)) and math.isfinite(scale) and scale > 0):
        raise UserError(f"bad --scale {scale}: expected a positive number such as 0.01")
    log = log or (lambda msg: None)
    out = Path(out) if out is not None else default_out(exp, scale)
    if out.exists() and not out.is_dir():
        raise UserError(f"cannot write the experiment into {out}: it is a file")
    specs = [r.scaled(scale) for r in exp.runs]
    # check every run before playing any: a typo in the last run must not cost the first ones
    for spec in specs:
        try:
            check_run_folder(_plan(spec, out / spec.name))
        except UserError as e:
            raise UserError(f"{exp.source or exp.name}: run {spec.name!r}: {e}") from None
    if command is None:
        src = exp.source if exp.source is not None else f"experiments/{exp.name}.toml"
        command = f"kc-sim run {src}" + (f" --scale {scale:g}" if scale != 1 else "")
    t0 = time.perf_counter()
    run_dirs = {}
    for i, spec in enumerate(specs):
        folder = out / spec.name
        log(f"[{i + 1}/{len(specs)}] {spec.name}: {', '.join(spec.agents)}, "
            f"{spec.players or min(len(spec.agents), 4)} players, {spec.rules}, {spec.count:,} {spec.mode}")
        try:
            res = run_tournament(list(spec.agents), players=spec.players, rounds=spec.rounds, matches=spec.matches,
                                 rules=spec.rules, seed=spec.seed, jobs=jobs, out=folder, quiet=quiet,
                                 chunk_size=spec.chunk_size, command=f"{command}  # run {spec.name}")
        except UserError as e:
            raise UserError(f"{exp.source or exp.name}: run {spec.name!r}: {e}") from None
        log(f"      {res.units:,} {spec.mode} in {res.seconds:.1f} s -> {folder}")
        run_dirs[spec.name] = folder
        if plots:
            from kc_sim.analysis.plots import plot_all
            plot_all(folder)
    markdown = findings_markdown(exp, specs, run_dirs, out, scale=scale, command=command)
    out.mkdir(parents=True, exist_ok=True)
    findings = out / FINDINGS_FILE
    tmp = findings.with_name(f".{findings.name}.tmp")
    tmp.write_text(markdown, encoding="utf-8")
    tmp.replace(findings)
    return ExperimentResult(exp, out, findings, markdown, run_dirs, time.perf_counter() - t0)


# --- findings ------------------------------------------------------------------------------

def _md_table(header, rows) -> str:
    def esc(v):
        return str(v).replace("|", "\\|")
    lines = ["| " + " | ".join(esc(h) for h in header) + " |",
             "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(esc(v) for v in r) + " |" for r in rows]
    return "\n".join(lines)


def _excludes(ci, value) -> int:
    """+1 when the interval lies above ``value``, -1 below, 0 when it contains it."""
    _, lo, hi = ci
    if math.isnan(lo):
        return 0
    return 1 if lo > value else -1 if hi < value else 0


def _seat_figures(data) -> dict:
    """Position win rates and the first seat's edges, clustered by deal."""
    return {"positions": data.position_rows(), "edge_equal": data.round_mean("edge"),
            "first_last": data.round_mean("first_last")}


def _run_row(spec: RunSpec, data, folder: Path, base: Path) -> list:
    try:
        rel = folder.resolve().relative_to(base.resolve().parent)
    except ValueError:
        rel = folder
    size = f"{data.n_matches:,} matches ({data.n:,} rounds)" if data.n_matches is not None else f"{data.n:,}"
    return [spec.name, ", ".join(data.labels), data.players, data.rules_label, size, f"{data.deals:,}",
            data.seed, f"`{rel.as_posix()}`"]


def findings_markdown(exp: Experiment, specs, run_dirs: dict, out: Path, *, scale: float = 1.0,
                      command: str | None = None) -> str:
    """The findings file: the question, how to reproduce, the runs, the results tables
    and a few plain sentences, every number with its 95% interval."""
    from kc_sim import __version__ as version
    from kc_sim.analysis.scan import scan_run

    datas = {s.name: scan_run(run_dirs[s.name]) for s in specs}
    lines = [f"# Findings: {exp.name}", "", f"**Question.** {exp.question}", ""]
    if exp.notes:
        lines += [exp.notes, ""]
    lines += ["Reproduce with:", "", "```bash", command or f"kc-sim run experiments/{exp.name}.toml", "```", ""]
    if scale != 1:
        lines += [f"_Scaled run (--scale {scale:g}): a quick look, not the full-size result._", ""]
    lines += [f"Written {_dt.datetime.now().strftime('%Y-%m-%d %H:%M')} by kc-sim {version}. "
              "Intervals are 95% and clustered by deal (every deal is played in every seat rotation, so "
              "rounds on one deal are not independent; see `kc_sim/analysis/plots.py`).", "",
              "## Runs", "",
              _md_table(["run", "agents", "players", "rules", "rounds", "deals", "seed", "folder"],
                        [_run_row(s, datas[s.name], run_dirs[s.name], out) for s in specs]), ""]
    if any((run_dirs[s.name] / "figures").is_dir() for s in specs):
        lines += ["Figures of each run: `<run folder>/figures/*.png` (or `kc-sim report <run folder>` for one HTML "
                  "page per run).", ""]
    body, summary = {"seats": _seats_section, "head_to_head": _h2h_section, "rules": _rules_section}[exp.kind](
        exp, specs, datas)
    lines += ["## Results", "", *body, "", "## Summary", "", *[f"- {s}" for s in summary], ""]
    return "\n".join(lines)


def _seats_section(exp, specs, datas):
    from kc_sim.analysis.plots import fmt_pct

    kmax = max(d.players for d in datas.values())
    header = ["run", "players", "rules"] + [f"position {p + 1}" + (" (first)" if p == 0 else "") for p in range(kmax)] \
        + ["first seat vs equal share", "first seat vs last seat", "blocked"]
    rows, summary = [], []
    for s in specs:
        d = datas[s.name]
        f = _seat_figures(d)
        pos = [fmt_pct(*r["win"], digits=2) for r in f["positions"]] + ["-"] * (kmax - d.players)
        rows.append([s.name, d.players, d.rules_label, *pos, _pp(*f["edge_equal"]), _pp(*f["first_last"]),
                     fmt_pct(*d.round_rate("blocked"), digits=3)])
        first = f["positions"][0]["win"]
        verdict = {1: "an advantage", -1: "a disadvantage", 0: "no detectable advantage"}[_excludes(f["edge_equal"], 0)]
        summary.append(f"{s.name} ({d.players} players, {d.rules_label}): the first player wins "
                       f"{fmt_pct(*first, digits=2)} of rounds, {_pp(*f['edge_equal'])} over an equal share of the rounds "
                       f"not blocked ({verdict}); first vs last seat {_pp(*f['first_last'])}.")
    body = ["Win rate by position in turn order (position 1 plays first, left of the dealer). "
            "\"First seat vs equal share\": the first seat's win rate minus (1 - blocked share) / players.", "",
            _md_table(header, rows)]
    return body, summary


def _label_index(data, label: str) -> int | None:
    try:
        return data.labels.index(label)
    except ValueError:
        return None


def _resolve_label(data, name: str) -> int | None:
    """An agent of the run by label, or by the label the registry gives the name (``merger``)."""
    a = _label_index(data, name)
    if a is not None:
        return a
    try:
        from kc_sim.play.registry import load_agent
        return _label_index(data, load_agent(name).name)
    except Exception:   # noqa: BLE001 - an unknown name simply is not in this run
        return None


def _deals_won_twice(data, a: int, b: int):
    """2-player runs: share of deals (line-up with a and b, both rotations) that one agent
    won from both seats: ``(a's rate, b's rate, deals)``, or None. Counted per deal while
    the run is scanned (both rotations of a deal are in the same part)."""
    f = data.pair(a, b)
    return None if f is None else f["twice"]


def _pair_figures(d, a: int, b: int) -> dict | None:
    """Head-to-head figures of agents a and b over the rounds where both sat (see
    :meth:`kc_sim.analysis.scan.RunStats.pair`)."""
    return d.pair(a, b)


def _h2h_section(exp, specs, datas):
    from kc_sim.analysis.plots import fmt_num, fmt_pct

    header = ["run", "players", "rules", "agent A", "agent B", "rounds together", "A win rate", "B win rate",
              "win rate A - B", "penalty diff (A - B)", "A finishes ahead of B", "verdict"]
    rows, summary, twice = [], [], []
    for s in specs:
        d = datas[s.name]
        for A, B in exp.pairs:
            a, b = _resolve_label(d, A), _resolve_label(d, B)
            if a is None or b is None:
                continue
            f = _pair_figures(d, a, b)
            if f is None:
                continue
            la, lb = d.labels[a], d.labels[b]
            sign, dsign = _excludes(f["win_diff"], 0.0), _excludes(f["pen_diff"], 0.0)
            identical = f["twice"] is not None and f["twice"][0][0] == 0 and f["twice"][1][0] == 0
            if sign > 0:
                verdict = f"{la} wins more"
            elif sign < 0:
                verdict = f"{lb} wins more"
            elif identical:
                verdict = "same result on every deal"
            else:
                verdict = "no difference detected"
            rows.append([s.name, d.players, d.rules_label, la, lb, f"{f['rounds']:,}", fmt_pct(*f["win_a"], digits=2),
                         fmt_pct(*f["win_b"], digits=2), _pp(*f["win_diff"]), fmt_num(*f["pen_diff"], digits=3),
                         fmt_pct(*f["ahead"], digits=2), verdict])
            where = f"{s.name} ({d.players} players, {d.rules_label})"
            pen = (f"{la} keeps {abs(f['pen_diff'][0]):.3f} penalty points {'fewer' if dsign < 0 else 'more'} than "
                   f"{lb} in the same round ({fmt_num(*f['pen_diff'], digits=3)})" if dsign else
                   f"mean penalty difference {fmt_num(*f['pen_diff'], digits=3)}, which contains 0")
            if identical:
                summary.append(f"{where}, {la} vs {lb}: every one of the {f['twice'][2]:,} deals was split (each "
                               "agent won it from the same seat): the two agents' choices never changed the winner.")
            elif sign == 0:
                summary.append(f"{where}, {la} vs {lb}: no detectable difference in win rate "
                               f"({fmt_pct(*f['win_a'], digits=2)} vs {fmt_pct(*f['win_b'], digits=2)}, difference "
                               f"{_pp(*f['win_diff'])}); {pen}.")
            else:
                winner, loser = (la, lb) if sign > 0 else (lb, la)
                summary.append(f"{where}: {winner} beats {loser}: {la} wins {fmt_pct(*f['win_a'], digits=2)} of the "
                               f"rounds they share, {lb} {fmt_pct(*f['win_b'], digits=2)} (difference "
                               f"{_pp(*f['win_diff'])}); {pen}.")
            if f["twice"] is not None:
                t = f["twice"]
                twice.append([s.name, la, lb, f"{t[2]:,}", fmt_pct(*t[0], digits=2), fmt_pct(*t[1], digits=2),
                              fmt_pct(1 - t[0][0] - t[1][0], digits=2)])
    body = ["Over the rounds where both agents sat. \"Win rate A - B\": difference of the two win rates in those "
            "rounds (with every agent in every seat of a line-up, seat effects cancel). Penalty diff: mean of "
            "(A's penalty - B's) in the same round; negative favours A. \"Finishes ahead\": A's penalty lower "
            "than B's (ties count half); with more than 2 players a line-up keeps its clockwise order in every "
            "rotation, so this also measures who sits before whom.", "", _md_table(header, rows)]
    if twice:
        body += ["", "With 2 players every deal is played from both seats. A deal won by the same agent from both "
                 "seats is one the strategy decided; a split deal went to whoever held the better seat or cards.", "",
                 _md_table(["run", "agent A", "agent B", "deals", "A wins from both seats", "B wins from both seats",
                            "split (or blocked)"], twice)]
    return body, summary


def _diff(d1, d2, value: str, paired: bool):
    """(difference, lo, hi) of a per-round mean of two runs (``value`` of
    :data:`kc_sim.analysis.scan.ROUND_VALUES`): paired by deal when the runs played the same deals
    (the per-batch sums of both runs share their batches, so S1 - S2 are the per-batch sums
    of the round-by-round differences), else as independent estimates."""
    from kc_sim.analysis.scan import Z95, mean_from_sums

    if paired:
        (s1, n1), (s2, _) = d1.round_sums(value), d2.round_sums(value)
        return mean_from_sums(s1 - s2, n1)
    m1, lo1, hi1 = d1.round_mean(value)
    m2, lo2, hi2 = d2.round_mean(value)
    se = math.hypot((hi1 - lo1) / (2 * Z95), (hi2 - lo2) / (2 * Z95))
    d = m1 - m2
    return d, d - Z95 * se, d + Z95 * se


def _baseline_of(spec: RunSpec, specs, datas) -> RunSpec | None:
    if spec.baseline is not None:
        return next(s for s in specs if s.name == spec.baseline)
    d = datas[spec.name]
    for s in specs:
        if s.name == spec.name:
            return None
        e = datas[s.name]
        if e.labels == d.labels and e.players == d.players and e.mode == d.mode:
            return s
    return None


def _rules_section(exp, specs, datas):
    from kc_sim.analysis.plots import fmt_num, fmt_pct
    from kc_sim.analysis.scan import compare_runs

    header = ["run", "players", "rules", "mean turns", "blocked", "first seat win rate", "first seat vs equal share",
              "mean penalty (per player and round)"]
    rows, summary, diffs = [], [], []
    for s in specs:
        d = datas[s.name]
        rows.append([s.name, d.players, d.rules_label, fmt_num(*d.round_mean("turns")),
                     fmt_pct(*d.round_rate("blocked"), digits=3), fmt_pct(*d.round_rate("first"), digits=2),
                     _pp(*d.round_mean("edge")), fmt_num(*d.round_mean("penalty"), digits=3)])
        base = _baseline_of(s, specs, datas)
        if base is None:
            continue
        e = datas[base.name]
        pair = compare_runs(d, e)
        paired = pair.same_deals
        dt = _diff(d, e, "turns", paired)
        db = _diff(d, e, "blocked", paired)
        de = _diff(d, e, "edge", paired)
        dp = _diff(d, e, "penalty", paired)
        changed = "-"
        if paired:
            changed_ci = pair.changed
            changed = fmt_pct(*changed_ci, digits=3)
        diffs.append([s.name, base.name, "paired by deal" if paired else "independent", _signed(*dt),
                      _pp(*db, digits=3), _pp(*de), _signed(*dp), changed])
        parts = []
        for label, ci, fmt in (("turns per round", dt, lambda c: _signed(*c)),
                               ("blocked rounds", db, lambda c: _pp(*c, digits=3)),
                               ("first-seat edge", de, lambda c: _pp(*c)),
                               ("mean penalty", dp, lambda c: _signed(*c))):
            if _excludes(ci, 0.0):
                parts.append(f"{label} {fmt(ci)}")
        same_play = paired and pair.same_result and pair.same_turns
        if same_play and pair.same_penalty:
            parts.append("every round is identical to the baseline's on the same deal (same turns, actions, "
                         "winner and penalties): the agents already play this way")
        elif same_play:
            parts.append("the play is unchanged (every round has the same turns, actions and winner as the "
                         "baseline's on the same deal); only the penalties differ")
        elif paired:
            parts.append(f"{fmt_pct(*changed_ci, digits=2)} of rounds end with another winner or block than "
                         "under the baseline on the same deal")
        nothing = "no detectable change in turns, blocked rounds, first-seat edge or mean penalty"
        summary.append(f"{s.name} ({d.rules_label}, {d.players} players) vs {base.name}: "
                       + ("; ".join(parts) if parts else nothing) + ".")
    body = ["\"First seat vs equal share\": the first player's win rate minus (1 - blocked share) / players. "
            "Mean penalty: over the players of a round (points left in hand; the winner's 0 included).", "",
            _md_table(header, rows)]
    if diffs:
        body += ["", "Change from the baseline run (this run minus the baseline). Paired by deal when both runs "
                 "played the same deals (same seed, agents and size); \"result changed\": rounds whose winner "
                 "(or block) differs from the baseline's on the same deal and seating.", "",
                 _md_table(["run", "baseline", "comparison", "turns", "blocked", "first-seat edge", "mean penalty",
                            "result changed"], diffs)]
    agent_table = _agent_table(specs, datas)
    if agent_table:
        body += ["", "Win rate of each agent (rounds):", "", agent_table]
    match_table = _match_table(specs, datas)
    if match_table:
        body += ["", "Matches (a shared win counts for every sharer):", "", match_table[0]]
        summary += match_table[1]
    return body, summary


def _base_name(label: str) -> str:
    return re.sub(r"#\d+$", "", label)


def _agent_table(specs, datas) -> str:
    """Each agent's win rate per run, for the runs where different agents met (self-play
    runs, where every copy wins an equal share by construction, are left out)."""
    from kc_sim.analysis.plots import fmt_pct

    mixed = [s for s in specs if len({_base_name(x) for x in datas[s.name].labels}) > 1]
    names = []
    for s in mixed:
        for lab in datas[s.name].labels:
            if lab not in names:
                names.append(lab)
    if not mixed:
        return ""
    rows = []
    for s in mixed:
        ag = {r["agent"]: r for r in datas[s.name].agent_rows()}
        rows.append([s.name] + [fmt_pct(*ag[n]["win"], digits=2) if n in ag else "-" for n in names])
    return _md_table(["run"] + names, rows)


def _match_table(specs, datas):
    from kc_sim.analysis.plots import fmt_num, fmt_pct

    ms = [s for s in specs if datas[s.name].n_matches is not None]
    if not ms:
        return None
    names = []
    for s in ms:
        for lab in datas[s.name].labels:
            if lab not in names:
                names.append(lab)
    rows, summary = [], []
    for s in ms:
        d = datas[s.name]
        length = d.match_length()
        mr = {r["agent"]: r for r in d.match_rows()}
        rows.append([s.name, d.rules_label, f"{d.n_matches:,}", fmt_num(*length)]
                    + [fmt_pct(*mr[n]["win"], digits=2) if n in mr else "-" for n in names])
        best = max(mr.values(), key=lambda r: r["win"][0])
        summary.append(f"{s.name} ({d.rules_label}): {fmt_num(*length)} rounds per match; best match win rate "
                       f"{best['agent']} {fmt_pct(*best['win'], digits=2)}.")
    return _md_table(["run", "rules", "matches", "rounds per match"] + [f"{n} match wins" for n in names], rows), summary
