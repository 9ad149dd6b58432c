"""``kc-sim tournament`` and ``kc-sim bench-agent`` (registered by ``kc_sim.cli``).

The commands raise :class:`~kc_sim.errors.UserError` for bad input; the command line
prints its message on one line and exits 2.
"""

from __future__ import annotations

import math
import os
import shlex
import tempfile
import time
from pathlib import Path
from typing import Annotated, Optional

import typer

from kc_sim.analysis.text import fmt_num, fmt_pct, ordinal
from kc_sim.cli.leaderboard import tournament_hook
from kc_sim.cli.options import RulesOpt
from kc_sim.errors import UserError
from kc_sim.play.agents.names import parse_agent_list
from kc_sim.processes.supervise import supervise

AgentsOpt = Annotated[str, typer.Option("--agents", help="agents, comma-separated: built-in names, "
                                        "package.module:Name or path/to/file.py:Name")]
PlayersOpt = Annotated[Optional[int], typer.Option(
    "--players", help="seats per table (default: as many as agents, at most 4); every line-up of "
    "this many agents plays")]
SeedOpt = Annotated[int, typer.Option("--seed", help="run seed: every deal derives from it")]
JobsOpt = Annotated[Optional[int], typer.Option(
    "--jobs", "-j", help="processes that play, this one included (default: every core, but no more than "
    "the work pays for, so a small run plays in this process; with dask and no --scheduler: LocalCluster workers)")]
BackendOpt = Annotated[Optional[str], typer.Option(
    "--backend", help="loky (local processes, default), dask (a dask.distributed cluster) or "
    "sequential (in this process)")]
SchedulerOpt = Annotated[Optional[str], typer.Option(
    "--scheduler", help="dask scheduler address (tcp://host:8786); default: a LocalCluster")]
QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="no progress bar or table, only the final lines")]
WaitOpt = Annotated[bool, typer.Option(
    "--wait", help="if another command is using the run folder, wait for it to end (default: stop, naming it)")]
DecisionTimeoutOpt = Annotated[Optional[float], typer.Option(
    "--decision-timeout", help="seconds one decision of a Python agent may take before the run stops, naming it "
    "(default 60; chunks of compiled agents get a limit from their measured rate); a decision over 1 s is named "
    "as slow and the run goes on")]
LuckOpt = Annotated[bool, typer.Option(
    "--luck/--no-luck", help="also compute control variates at the draws and print each pair's luck-adjusted "
    "score and penalty difference with the factor fewer rounds it is worth (single rounds, draw=end or start; "
    "off by default: measured worth about 1.0x on duplicate deals, see docs/analysis.md)")]


UntilOpt = Annotated[Optional[str], typer.Option(
    "--until", help="decided: stop as soon as every pair of agents is decided (an anytime-valid confidence "
    "sequence on the per-deal paired score excludes 50%, or is narrower than --precision), at most "
    "--max-rounds; the same command stops at the same round whatever --jobs or backend")]
PrecisionOpt = Annotated[Optional[str], typer.Option(
    "--precision", help="with --until: a pair also counts as decided once its interval's half-width is "
    "below this (0.5pp, 0.5% or 0.005); default: only a separation decides")]
MaxRoundsOpt = Annotated[Optional[int], typer.Option(
    "--max-rounds", help="with --until: the most rounds to play (default 2,000,000; 200,000 with Python "
    "agents)")]
AlphaOpt = Annotated[Optional[float], typer.Option(
    "--alpha", help="with --until: the chance of ever declaring a difference that is not there, over all "
    "pairs together (default 0.05)")]


def _stalled(entry: dict, why: str):
    """What the supervisor says when the run's process is stuck (``entry``: its watch file):
    the stalled round, found by replaying its chunk (:func:`kc_sim.tournament.rederive.stalled`)."""
    from kc_sim.tournament.rederive import stalled  # lazy: only now does the supervisor need the game

    return stalled(entry, why)


def _command(name: str, first=None, **options) -> str:
    """The command as it would be typed, rebuilt from the parsed options (for the manifest)."""
    words = ["kc-sim", name] + ([str(first)] if first is not None else [])
    for key, value in options.items():
        flag = "--" + key.replace("_", "-")
        if value is True:
            words.append(flag)
        elif value is not None and value is not False:
            words += [flag, str(value)]
    return shlex.join(words)


def tournament(
    agents: AgentsOpt,
    players: PlayersOpt = None,
    rounds: Annotated[Optional[int], typer.Option(
        "--rounds", help="single rounds in all (default 200,000; 20,000 with Python agents); rounded "
        "up to whole deals (each deal is played in every seating)")] = None,
    matches: Annotated[Optional[int], typer.Option(
        "--matches", help="play this many whole matches under the rules' match switch instead of rounds")] = None,
    rules: RulesOpt = "classic",
    seed: SeedOpt = 0,
    jobs: JobsOpt = None,
    backend: BackendOpt = None,
    scheduler: SchedulerOpt = None,
    out: Annotated[Optional[Path], typer.Option(
        "--out", "-o", help="run folder (default results/<name>); rerun into it to resume")] = None,
    records: Annotated[int, typer.Option(
        "--records", help="keep this many game records (records.jsonl) for kc-sim check and replay")] = 0,
    chunk_size: Annotated[Optional[int], typer.Option(
        "--chunk-size", help="rounds (matches with --matches) per chunk, one parquet part each "
        "(default 50,000 rounds / 5,000 matches, a twentieth of that with Python agents)")] = None,
    seating: Annotated[str, typer.Option(
        "--seating", help="balanced (default): every deal in all k! seatings (k <= 4; a balanced "
        "round-table design for more seats), so the order of --agents and who sits before whom cancel; "
        "rotations: the k cyclic rotations only, for comparison")] = "balanced",
    until: UntilOpt = None,
    precision: PrecisionOpt = None,
    max_rounds: MaxRoundsOpt = None,
    alpha: AlphaOpt = None,
    quiet: QuietOpt = False,
    wait: WaitOpt = False,
    decision_timeout: DecisionTimeoutOpt = None,
    luck: LuckOpt = False,
):
    """Play every line-up of the agents in every seating on duplicate deals; write
    parquet results, a summary and a manifest; resume an interrupted run."""
    typed = dict(locals())          # the options as typed, named once: in the signature above
    started = process_start()
    supervise(_stalled)          # the rest runs in a child this process watches (kc_sim.processes.supervise)
    from kc_sim.tournament.early import run_pool, start_early  # lazy: joblib; kc-sim --help needs none
    from kc_sim.tournament.options import TournamentOptions

    command = _command("tournament", **{**typed, "records": records or None, "wait": None,
                                        "seating": None if seating == "balanced" else seating})
    opts = TournamentOptions.create(**typed, command=command)
    pool = run_pool()
    start_early(pool, opts)     # the workers start while this process imports and plans
    # lazy: loads numba (~1.5 s); kc-sim --help must not
    from kc_sim.tournament.run import run_tournament

    with pool:                  # closed now, also after an error: left to the interpreter's exit it waits for them
        res = run_tournament(opts, pool=pool, started=started)
    if not quiet:
        typer.echo(format_summary(res.summary))
    tournament_hook(res, quiet)             # with 3+ agents the leaderboard, saved in the run folder
    if luck:
        typer.echo(luck_lines(res))
    typer.echo(final_line(res))
    for what, path in res.files.items():
        if path is not None:
            typer.echo(f"  {what:9s} {path}")


def process_start() -> float:
    """When this process started, on the ``time.perf_counter()`` clock: the final line counts
    start-up (importing, which compiles the core on a cold cache) from there. On Linux this
    is the kernel's start time of the process (10 ms ticks since boot); elsewhere, when
    this module was imported."""
    try:
        ticks = int(Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()[19])
        age = time.clock_gettime(time.CLOCK_BOOTTIME) - ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, AttributeError):
        return _IMPORTED
    return time.perf_counter() - max(age, 0.0)


_IMPORTED = time.perf_counter()


def final_line(res) -> str:
    """The closing line: size, wall time split into start-up (compiling or loading the
    compiled code, starting workers), play (with its rate) and the rest (summary, records),
    chunks, and where the results are. The rate counts play time only, never compile time."""
    unit = "rounds" if res.plan.mode == "rounds" else "matches"
    extra = f" ({res.rounds:,} rounds)" if unit == "matches" else ""
    if res.played_units:
        played = res.played_units + res.dropped_units
        rate = played / res.play_seconds if res.play_seconds > 0 else float("nan")
        rest = max(res.seconds - res.start_seconds - res.play_seconds, 0.0)
        phases = (f"compile and start-up {res.start_seconds:.1f} s, play {res.play_seconds:.1f} s at {rate:,.0f} {unit}/s"
                  f"{', ' + res.loop if res.loop else ''}, summary {rest:.1f} s")
    else:
        phases = "nothing left to play"
    chunks = res.played_chunks + res.resumed_chunks
    size = f"{res.units:,} {unit}{extra}{rounded_up(res)}"
    if res.resumed_chunks:       # the time and rate are this command's, over what it played, not the run's
        size += f" in the run, {res.played_units:,} of them played now"
        done = f"{res.resumed_chunks} of {chunks} chunks were already done"
    else:
        done = f"{chunks} chunk" + ("s" if chunks != 1 else "")
    stop = f"; stopped: {res.stop}" if res.stop else ""
    if res.dropped_units:
        done += f" ({res.dropped_units:,} {unit} in flight after the stop were dropped)"
    return f"{size} in {res.seconds:.1f} s ({phases}); {done}{stop}; results in {res.out}"


def rounded_up(res) -> str:
    """Why a whole run plays more than asked: `` (1,000,000 asked for, rounded up to whole
    deals: 41,667 deals x 24 seatings)``; empty when it plays what was asked, or stopped early."""
    sched = res.plan.schedule
    asked = res.plan.config.requested
    if res.stop or not asked or res.units != sched.units or sched.units == asked:
        return ""
    lineups = f" x {len(sched.lineups)} line-ups" if len(sched.lineups) > 1 else ""
    return (f" ({asked:,} asked for, rounded up to whole deals: {sched.groups:,} deals x "
            f"{len(sched.seatings)} seatings{lineups})")


def _ci(v, lo, hi, pct: bool) -> str:
    """A table cell: a rate as ``52.3% [52.1, 52.5]`` or a number as `` 2.60 [2.59, 2.62]``;
    a figure that was the same in every deal (a zero-width interval) says so."""
    if lo == hi and not (math.isnan(lo) or math.isnan(v)):
        return (fmt_pct(v, width=5) if pct else fmt_num(v, width=6)) + " in every deal"
    return fmt_pct(v, lo, hi, width=5, bound_width=4) if pct else fmt_num(v, lo, hi, width=6)


def format_summary(df) -> str:
    """The summary as a plain text table: agents, then head-to-head rows if any, with the
    notes that say what the figures and their intervals are."""
    if df is None or not len(df):
        return ""
    agents = df[df["opponent"].isna()]
    positions = [c for c in df.columns if c.startswith("win_rate_pos_")]
    deals = int(agents["deals"].max()) if "deals" in agents and agents["deals"].notna().any() else None
    lines = [f"{'agent':18s} {'rounds':>10s}  {'win rate [95% CI]':22s} {'mean penalty [95% CI]':22s} "
             + " ".join(f"{ordinal(int(c.rsplit('_', 1)[1])):>6s}" for c in positions)]
    for _, r in agents.iterrows():
        lines.append(f"{str(r['agent']):18s} {int(r['rounds']):>10,d}  "
                     f"{_ci(r['win_rate'], r['win_lo'], r['win_hi'], True):22s} "
                     f"{_ci(r['mean_penalty'], r['penalty_lo'], r['penalty_hi'], False):22s} "
                     + " ".join(f"{100 * r[c]:5.1f}%" for c in positions))
    if positions:
        lines.append(f"{', '.join(ordinal(p + 1) for p in range(len(positions)))}: win rate by position in turn "
                     "order (1st plays first, left of the dealer; the dealer is drawn for every deal, so a seat's "
                     "number says little)")
    if "matches" in df.columns:
        lines.append("")
        lines.append(f"{'agent':18s} {'matches':>10s}  {'match win rate [95% CI]':24s} {'mean total [95% CI]':22s}")
        for _, r in agents.iterrows():
            lines.append(f"{str(r['agent']):18s} {int(r['matches']):>10,d}  "
                         f"{_ci(r['match_win_rate'], r['match_win_lo'], r['match_win_hi'], True):24s} "
                         f"{_ci(r['mean_total'], r['total_lo'], r['total_hi'], False):22s}")
        lines.append("match win rate: a shared win (equal lowest totals) counts as a win for every agent that "
                     "shares it, so the rates can add up to more than 100%")
    pairs = df[df["opponent"].notna()]
    if len(pairs):
        if len(agents) == 2:                          # one pair: its two rows say the same thing
            pairs = pairs.iloc[:1]
        lines.append("")
        lines.append(f"{'agent':18s} {'vs':18s} {'rounds':>10s}  {'finishes ahead [95% CI]':24s} "
                     f"{'win rate [95% CI]':22s} {'penalty diff [95% CI]':24s}")
        for _, r in pairs.iterrows():
            lines.append(f"{str(r['agent']):18s} {str(r['opponent']):18s} {int(r['rounds']):>10,d}  "
                         f"{_ci(r['ahead'], r['ahead_lo'], r['ahead_hi'], True):24s} "
                         f"{_ci(r['win_rate'], r['win_lo'], r['win_hi'], True):22s} "
                         f"{_ci(r['penalty_diff'], r['diff_lo'], r['diff_hi'], False):24s}")
        lines.append("finishes ahead: share of the rounds both played in which the agent's penalty was lower "
                     "(ties half); it and the penalty diff are paired within each deal")
        lines.append("win rate: share of the rounds both played in which the agent went out (won the round; a "
                     "blocked round is won by nobody)")
        lines += identical_notes(pairs)
    why = "every deal is played in every seating, so its rounds are not independent"
    lines.append(f"intervals: 95%, clustered by deal ({deals:,} deals; {why})" if deals
                 else f"intervals: 95%, clustered by deal ({why})")
    return "\n".join(lines)


def identical_notes(pairs) -> list[str]:
    """One line for each pair of head-to-head rows that was level in every deal (two agents
    that play identically), saying what its zero difference and its interval mean."""
    level = pairs[pairs["level"].fillna(False).astype(bool)] if "level" in pairs else pairs.iloc[:0]
    lines, done = [], set()
    for _, r in level.iterrows():
        key = frozenset((str(r["agent"]), str(r["opponent"])))
        if key not in done:
            done.add(key)
            lines.append(f"{r['agent']} and {r['opponent']} played identically: level in every deal "
                         "(the same results with the two swapped): their difference is 0 here, and its interval "
                         "allows for deals not yet seen where they would differ")
    return lines


def baseline_names(exclude: str | None = None) -> list[str]:
    """The four baseline agents, ``exclude`` (a canonical name) left out."""
    # lazy: loads numba (~1.5 s); kc-sim --help must not
    from kc_sim.play.agents.registry import BASELINES

    return [n for n in BASELINES if n != exclude]


def warm(
    agents: Annotated[Optional[list[str]], typer.Option(
        "--agents", help="a set of agents to compile the loop for (repeat for several sets, e.g. "
        "--agents greedy,merger --agents planner); default: the sets make run and make bench play")] = None,
    matches: Annotated[bool, typer.Option(help="also compile the match loop of each set")] = False,
):
    """Compile the loops tournaments play into the compile cache ahead of time (once, e.g.
    after installing; minutes for every default set): each set of agents gets the round loop compiled for its policies; later runs
    of that set load it in milliseconds. A run compiles its own loop if it is not there."""
    from kc_sim.core.cache import configure  # lazy: see record
    from kc_sim.play.driver import runner

    sets = [parse_agent_list(a) for a in agents] if agents else runner.WARM_SETS
    total = time.perf_counter()
    for names, mode, loop, seconds in runner.warm(sets, ("rounds", "matches") if matches else ("rounds",)):
        typer.echo(f"{','.join(names):40s} {mode:8s} {loop:17s} {seconds:6.2f} s")
    typer.echo(f"warm in {time.perf_counter() - total:.1f} s; compile cache {configure()}")


def bench_agent(
    agent: Annotated[str, typer.Argument(help="the agent to measure: a built-in name, "
                                         "package.module:Name or path/to/file.py:Name")],
    baselines: Annotated[Optional[str], typer.Option(
        "--baselines", help="comma-separated opponents (default: the four baselines random, greedy, king-first, pile-merger)")] = None,
    rounds: Annotated[Optional[int], typer.Option(
        "--rounds", help="rounds against each baseline (default 100,000; 10,000 for Python agents)")] = None,
    rules: RulesOpt = "classic",
    seed: SeedOpt = 0,
    jobs: JobsOpt = None,
    backend: BackendOpt = None,
    scheduler: SchedulerOpt = None,
    out: Annotated[Optional[Path], typer.Option(
        "--out", "-o", help="keep the run folder (parquet, summary, manifest) here; default: discard")] = None,
    check: Annotated[bool, typer.Option(
        "--check", help="first run the conformance check (kc_sim.testing.check_agent): legal under all 96 "
        "round rule sets, reproducible, blind to hidden cards; stop with exit 2 if it fails")] = False,
    until: UntilOpt = None,
    precision: PrecisionOpt = None,
    max_rounds: Annotated[Optional[int], typer.Option(
        "--max-rounds", help="with --until: the most rounds against each baseline (default 1,000,000; "
        "100,000 for Python agents)")] = None,
    alpha: AlphaOpt = None,
    quiet: QuietOpt = False,
    wait: WaitOpt = False,
    decision_timeout: DecisionTimeoutOpt = None,
    luck: LuckOpt = False,
):
    """Play an agent against each baseline, two seats, both seat orders on duplicate deals;
    print its win rate and mean penalty difference (agent minus baseline) with 95% intervals.
    With --until decided, stop as soon as every comparison is decided."""
    supervise(_stalled)          # the rest runs in a child this process watches (kc_sim.processes.supervise)
    import dataclasses

    # lazy: loads numba (~1.5 s); kc-sim --help must not
    from kc_sim.play.agents.registry import load_agent
    from kc_sim.tournament.options import TournamentOptions
    from kc_sim.tournament.plan import DEFAULT_ROUNDS, DEFAULT_ROUNDS_PYTHON
    from kc_sim.tournament.run import run_tournament
    from kc_sim.tournament.stopping import UNTIL_MAX_FACTOR

    spec = load_agent(agent)
    if check:
        from kc_sim.testing import check_agent  # lazy: only with --check

        report = check_agent(agent)
        if not report.passed:
            raise UserError(f"{report.agent} fails the conformance check: {report.failure}")
        typer.echo(str(report))
    names = parse_agent_list(baselines, "--baselines") if baselines else baseline_names(spec.name)
    if not names:
        raise UserError("no baselines to play against: give --baselines a,b")
    for n in names:
        load_agent(n)
    # the options as typed, per baseline (checked), then the whole run's size: rounds against each baseline
    opts = TournamentOptions.create([agent, *names], players=2, rounds=rounds, max_rounds=max_rounds, rules=rules,
                                    seed=seed, jobs=jobs, backend=backend, scheduler=scheduler, until=until,
                                    precision=precision, alpha=alpha, quiet=quiet, wait=wait,
                                    decision_timeout=decision_timeout, luck=luck,
                                    lineups=[(0, j) for j in range(1, len(names) + 1)])
    # rounds against each baseline by default: half a tournament's default size
    default = (DEFAULT_ROUNDS if spec.compiled else DEFAULT_ROUNDS_PYTHON) // 2 * (UNTIL_MAX_FACTOR if until else 1)
    per = opts.rounds if opts.rounds is not None else default
    command = _command("bench-agent", agent, baselines=baselines, rounds=None if until else per, rules=rules, seed=seed, jobs=jobs,
                       backend=backend, scheduler=scheduler, out=out, until=until, precision=precision,
                       max_rounds=max_rounds, alpha=alpha, quiet=quiet, decision_timeout=decision_timeout, luck=luck)
    with tempfile.TemporaryDirectory(prefix="kc-bench-") as tmp:
        opts = dataclasses.replace(opts, rounds=per * len(names), out=out if out is not None else Path(tmp) / "run",
                                   command=command)
        res = run_tournament(opts)
        table = bench_table(res)
        lucky = luck_lines(res, [(0, j) for j in range(1, len(names) + 1)]) if luck else None
    name = res.plan.labels[res.plan.named[0]]
    typer.echo(format_bench(table, name, res.tally.agent_table(res.plan.labels).set_index("agent").loc[name]))
    if lucky:
        typer.echo(lucky)
    typer.echo(final_line(res) if out is not None else final_line(res).rsplit(";", 1)[0])


def luck_lines(res, pairs=None) -> str:
    """The luck-adjusted lines of a run played with --luck (:mod:`kc_sim.analysis.luck_adjusted`),
    timed: the factor is worth its seconds only if it beats the time they add."""
    from kc_sim.analysis.luck_adjusted import format_luck, run_luck_adjusted  # lazy: pyarrow

    t = time.perf_counter()
    labels = res.plan.labels
    est = run_luck_adjusted(res.plan.out, None if pairs is None else [(labels[a], labels[b]) for a, b in pairs])
    return format_luck(est) + f" (computed in {time.perf_counter() - t:.1f} s)"


def bench_table(res):
    """Head-to-head rows of the measured agent (the first named) against each baseline."""
    h2h = res.tally.head_to_head(res.plan.labels)
    return h2h[h2h["agent"] == res.plan.labels[res.plan.named[0]]].reset_index(drop=True)


def format_bench(table, name: str, row=None) -> str:
    """The agent's head-to-head rows against each baseline; ``row``: its row of the agent
    table, for its win rate by position in turn order over all baselines."""
    lines = [f"{name} against each baseline (both seat orders, duplicate deals):",
             f"{'baseline':18s} {'rounds':>10s}  {'win rate [95% CI]':22s} {'penalty diff [95% CI]':24s}"]
    for _, r in table.iterrows():
        lines.append(f"{str(r['opponent']):18s} {int(r['rounds']):>10,d}  "
                     f"{_ci(r['win_rate'], r['win_lo'], r['win_hi'], True):22s} "
                     f"{_ci(r['penalty_diff'], r['diff_lo'], r['diff_hi'], False):24s}")
    lines.append("penalty diff = mean penalty of the agent minus the baseline's in the same round "
                 "(negative is better); intervals: 95%, clustered by deal, the difference paired within the deal")
    if row is not None and "win_rate_pos_1" in row:
        lines.append(f"{name} by position in turn order, over all baselines: " + ", ".join(
            f"{ordinal(p)} {_ci(row[f'win_rate_pos_{p}'], row[f'win_lo_pos_{p}'], row[f'win_hi_pos_{p}'], True).strip()}"
            for p in (1, 2)) + " (1st plays first, left of the dealer)")
    return "\n".join(lines + identical_notes(table))
