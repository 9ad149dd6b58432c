"""The findings of an experiment: ``findings.md``, every number with its 95% interval.

:func:`findings_markdown` scans every run once (:func:`kc_sim.analysis.scan.scan_run`)
and writes the question, how to reproduce, the runs, then the section of the
experiment's comparison (``seats``, ``head_to_head``, ``rules`` or ``stopping``: the tables
and a few plain sentences). A ``rules`` run is compared with its baseline paired by deal
when both played the same deals (:func:`kc_sim.analysis.compare.compare_runs`). A
``stopping`` experiment is reported by :mod:`kc_sim.analysis.experiments.stopping` from
each repeat's manifest (and its parts, block by block, for the per-deal sd).
"""

from __future__ import annotations

import datetime as _dt
from pathlib import Path

from kc_sim import __version__ as version
from kc_sim.analysis.compare import compare_runs
from kc_sim.analysis.experiments.schema import Experiment, RunSpec
from kc_sim.analysis.experiments.stopping import stopping_runs_table, stopping_section
from kc_sim.analysis.experiments.tables import md_table
from kc_sim.analysis.scan import scan_run
from kc_sim.analysis.text import excludes, fmt_num, fmt_pct, fmt_pp, fmt_signed
from kc_sim.play.agents.names import base_label
from kc_sim.play.agents.registry import load_agent
from kc_sim.stats import difference_of_independent, mean_from_sums

FINDINGS_FILE = "findings.md"


_md_table = md_table


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
    stopping = exp.kind == "stopping"
    # a stopping experiment reads each repeat's manifest (and parts only where needed), not scan_run
    datas = {} if stopping else {s.name: scan_run(run_dirs[s.name]) for s in specs}
    lines = [f"# Findings: {exp.name}", "", f"**Question.** {exp.question}", ""]
    if exp.notes:
        lines += [exp.notes, ""]
    lines += ["Reproduce with:", "", "```bash", command or f"kc-sim run experiments/{exp.name}.toml", "```", ""]
    if scale != 1:
        lines += [f"_Scaled run (--scale {scale:g}): a quick look, not the full-size result._", ""]
    written = f"Written {_dt.datetime.now().strftime('%Y-%m-%d %H:%M')} by kc-sim {version}. "
    if stopping:
        lines += [written + "Every run stops early (`until = \"decided\"`, see `kc_sim/tournament/stopping.py`); "
                  "a repeated run is played once per seed, one folder per repeat.", "",
                  "## Runs", "", stopping_runs_table(specs, run_dirs, out), ""]
    else:
        lines += [written + "Intervals are 95% and clustered by deal (every deal is played in every seating, so "
                  "rounds on one deal are not independent; see `docs/analysis.md`, What the intervals are).", "",
                  "## Runs", "",
                  _md_table(["run", "agents", "players", "rules", "rounds", "deals", "seed", "folder"],
                            [_run_row(s, datas[s.name], run_dirs[s.name], out) for s in specs]), ""]
    if any((run_dirs[s.name] / "figures").is_dir() for s in specs):
        lines += ["Figures of each run: `<run folder>/figures/*.png` (or `kc-sim report <run folder>` for one HTML "
                  "page per run).", ""]
    elif stopping and any((f / "figures").is_dir() for s in specs for f, _ in s.folders(run_dirs[s.name])[:1]):
        lines += ["Figures of the first repeat of each run: `<run folder>/r000/figures/*.png`.", ""]
    if stopping:
        body, summary = stopping_section(exp, specs, run_dirs)
    else:
        body, summary = {"seats": _seats_section, "head_to_head": _h2h_section, "rules": _rules_section}[exp.kind](
            exp, specs, datas)
    lines += ["## Results", "", *body, "", "## Summary", "", *[f"- {s}" for s in summary], ""]
    return "\n".join(lines)


def _seats_section(exp, specs, datas):
    kmax = max(d.players for d in datas.values())
    header = ["run", "players", "rules"] + [f"position {p + 1}" + (" (first)" if p == 0 else "") for p in range(kmax)] \
        + ["first seat vs equal share", "first seat vs last seat", "blocked"]
    rows, summary = [], []
    for s in specs:
        d = datas[s.name]
        f = _seat_figures(d)
        pos = [fmt_pct(*r["win"], digits=2) for r in f["positions"]] + ["-"] * (kmax - d.players)
        rows.append([s.name, d.players, d.rules_label, *pos, fmt_pp(*f["edge_equal"]), fmt_pp(*f["first_last"]),
                     fmt_pct(*d.round_rate("blocked"), digits=3)])
        first = f["positions"][0]["win"]
        verdict = {1: "an advantage", -1: "a disadvantage", 0: "no detectable advantage"}[excludes(f["edge_equal"], 0)]
        summary.append(f"{s.name} ({d.players} players, {d.rules_label}): the first player wins "
                       f"{fmt_pct(*first, digits=2)} of rounds, {fmt_pp(*f['edge_equal'])} over an equal share of the rounds "
                       f"not blocked ({verdict}); first vs last seat {fmt_pp(*f['first_last'])}.")
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
        return _label_index(data, load_agent(name).name)
    except Exception:   # noqa: BLE001 - an unknown name simply is not in this run
        return None


def _deals_won_twice(data, a: int, b: int):
    """2-player runs: share of deals (line-up with a and b, both seatings) that one agent
    won from both seats: ``(a's rate, b's rate, deals)``, or None. Counted per deal while
    the run is scanned (both seatings of a deal are in the same part)."""
    f = data.pair(a, b)
    return None if f is None else f["twice"]


def _pair_figures(d, a: int, b: int) -> dict | None:
    """Head-to-head figures of agents a and b over the rounds where both sat (see
    :meth:`kc_sim.analysis.scan.RunStats.pair`)."""
    return d.pair(a, b)


def _h2h_section(exp, specs, datas):
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
            sign, dsign = excludes(f["win_diff"], 0.0), excludes(f["pen_diff"], 0.0)
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
                         fmt_pct(*f["win_b"], digits=2), fmt_pp(*f["win_diff"]), fmt_num(*f["pen_diff"], digits=3),
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
                               f"{fmt_pp(*f['win_diff'])}); {pen}.")
            else:
                winner, loser = (la, lb) if sign > 0 else (lb, la)
                summary.append(f"{where}: {winner} beats {loser}: {la} wins {fmt_pct(*f['win_a'], digits=2)} of the "
                               f"rounds they share, {lb} {fmt_pct(*f['win_b'], digits=2)} (difference "
                               f"{fmt_pp(*f['win_diff'])}); {pen}.")
            if f["twice"] is not None:
                t = f["twice"]
                twice.append([s.name, la, lb, f"{t[2]:,}", fmt_pct(*t[0], digits=2), fmt_pct(*t[1], digits=2),
                              fmt_pct(1 - t[0][0] - t[1][0], digits=2)])
    body = ["Over the rounds where both agents sat. \"Win rate A - B\": difference of the two win rates in those "
            "rounds (with every agent in every seat of a line-up, seat effects cancel). Penalty diff: mean of "
            "(A's penalty - B's) in the same round; negative favours A. \"Finishes ahead\": A's penalty lower "
            "than B's (ties count half). Every deal is played in every seating (all k! orders of the table), "
            "so who sits before whom cancels too.", "", _md_table(header, rows)]
    if twice:
        body += ["", "With 2 players every deal is played from both seats. A deal won by the same agent from both "
                 "seats is one the strategy decided; a split deal went to whoever held the better seat or cards.", "",
                 _md_table(["run", "agent A", "agent B", "deals", "A wins from both seats", "B wins from both seats",
                            "split (or blocked)"], twice)]
    return body, summary


def round_diff(d1, d2, value: str, paired: bool):
    """(difference, lo, hi) of a per-round mean of two runs (``value`` of
    :data:`kc_sim.stats.run_stats.ROUND_VALUES`): paired by deal when the runs played the same deals
    (the per-batch sums of both runs share their batches, so S1 - S2 are the per-batch sums
    of the round-by-round differences), else as independent estimates."""
    (s1, n1), (s2, n2) = d1.round_sums(value), d2.round_sums(value)
    if paired:
        return mean_from_sums(s1 - s2, n1, paired=True)
    return difference_of_independent(s1, n1, s2, n2)


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
    header = ["run", "players", "rules", "mean turns", "blocked", "first seat win rate", "first seat vs equal share",
              "mean penalty (per player and round)"]
    rows, summary, diffs = [], [], []
    for s in specs:
        d = datas[s.name]
        rows.append([s.name, d.players, d.rules_label, fmt_num(*d.round_mean("turns")),
                     fmt_pct(*d.round_rate("blocked"), digits=3), fmt_pct(*d.round_rate("first"), digits=2),
                     fmt_pp(*d.round_mean("edge")), fmt_num(*d.round_mean("penalty"), digits=3)])
        base = _baseline_of(s, specs, datas)
        if base is None:
            continue
        e = datas[base.name]
        pair = compare_runs(d, e)
        paired = pair.same_deals
        dt = round_diff(d, e, "turns", paired)
        db = round_diff(d, e, "blocked", paired)
        de = round_diff(d, e, "edge", paired)
        dp = round_diff(d, e, "penalty", paired)
        changed = "-"
        if paired:
            changed_ci = pair.changed
            changed = fmt_pct(*changed_ci, digits=3)
        diffs.append([s.name, base.name, "paired by deal" if paired else "independent", fmt_signed(*dt),
                      fmt_pp(*db, digits=3), fmt_pp(*de), fmt_signed(*dp), changed])
        parts = []
        for label, ci, fmt in (("turns per round", dt, lambda c: fmt_signed(*c)),
                               ("blocked rounds", db, lambda c: fmt_pp(*c, digits=3)),
                               ("first-seat edge", de, lambda c: fmt_pp(*c)),
                               ("mean penalty", dp, lambda c: fmt_signed(*c))):
            if excludes(ci, 0.0):
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


def _agent_table(specs, datas) -> str:
    """Each agent's win rate per run, for the runs where different agents met (self-play
    runs, where every copy wins an equal share by construction, are left out)."""
    mixed = [s for s in specs if len({base_label(x) for x in datas[s.name].labels}) > 1]
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
