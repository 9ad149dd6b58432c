"""The coverage study of kc-sim's intervals (issue 22): run it again with

    python experiments/interval_coverage.py                 # the full study: hours on one core
    python experiments/interval_coverage.py --runs 200      # a quick look
    python experiments/interval_coverage.py --runs 4000 --runs-at 500:2000 --players 2,3,4 \
        --deals 20,50,500 --bootstrap 0 --real-runs 500 --real-deals 50 --jobs 2  # results/README.md §10

It simulates tournaments with a known truth (kc_sim.analysis.coverage: a synthetic tournament
with kc-sim's structure of line-ups, seatings and deals) at 2, 3 and 4 players in three
scenarios (self-play, a known difference, identical agents) and at 20, 50 and 500 deals, sums
each up with kc-sim's own code, and counts how often each kind of printed interval contains
the truth; then the same for real agents (the workers' own tallies against one large run),
and the power check (runs of the size kc-sim power prints, resampled from a real run's
deals). A real cell is also written agent by agent and pair by pair, with the share of deals
in which each pair's penalties differ. Every cell is saved as it finishes (OUT/cells/*.json),
so an interrupted study resumes; the tables go to OUT/coverage.md. The files of OUT are data:
read back only as the numbers of a cell or a truth, and computed again otherwise.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from kc_sim.analysis import coverage as C

REAL = {3: ["greedy", "merger", "random", "king-first"], 4: ["greedy", "merger", "random", "king-first"],
        2: ["random:1", "random:2", "greedy"]}


def cell_file(out: Path, name: str) -> Path:
    return out / "cells" / f"{name}.json"


def truth_of(scenario: str, players: int, truth_deals: int, out: Path) -> dict:
    """The truth of a model, computed once and kept in OUT/truth/ as JSON (kind -> [[key,
    value], ...], a key an agent, seat or position number or a list of them). A file there
    is data: read back only as numbers under the expected kinds, recomputed otherwise."""
    path = out / "truth" / f"{scenario}_{players}p_{truth_deals}.json"
    if path.exists():
        try:
            saved = json.loads(path.read_text())
            true = {kind: {(tuple(k) if isinstance(k, list) else int(k)): float(v) for k, v in saved[kind]}
                    for kind, _, _ in C.KINDS}
            if all(isinstance(v, float) for d in true.values() for v in d.values()):
                return true
        except (OSError, ValueError, TypeError, KeyError):
            pass
        print(f"{path}: not a truth file this script wrote; computing the truth again", file=sys.stderr)
    true = C.truth(C.Model.scenario(scenario, players), truth_deals)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_whole(path, {kind: [[list(k) if isinstance(k, tuple) else k, float(v)] for k, v in d.items()]
                       for kind, d in true.items()})
    return true


def write_whole(path: Path, data) -> None:
    """``data`` as JSON at ``path``, whole or not at all: a kill leaves no half file."""
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, default=str))
    os.replace(tmp, path)


def synthetic(args) -> dict:
    scenario, players, deals, runs, bootstrap, truth_deals, out = args
    t0 = time.perf_counter()
    true = truth_of(scenario, players, truth_deals, out)
    cell = C.run_cell(scenario, players, deals, runs, true=true, bootstrap=bootstrap, matches=not bootstrap)
    return {**cell.__dict__, "seconds": time.perf_counter() - t0, "bootstrap": bootstrap}


def real(args) -> dict:
    players, deals, runs, truth_deals = args
    t0 = time.perf_counter()
    cell = C.real_cell(REAL[players], players, deals, runs, truth_deals=truth_deals)
    return {**cell.__dict__, "seconds": time.perf_counter() - t0, "bootstrap": 0}


def _number(v) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise ValueError(f"not a number: {v!r}")
    return v


def _kind(kind) -> str:
    if kind not in {k for k, _, _ in C.KINDS}:
        raise ValueError(f"not a kind of interval: {kind!r}")
    return kind


def read_cell(path: Path, name: str) -> dict | None:
    """The cell ``name`` as this script wrote it to ``path``, read back as data: the counts must
    be numbers under the study's kinds, and the players and deals those of the name. None when
    the file is missing or is not such a cell (it is then run again)."""
    if not path.exists():
        return None
    if name.startswith("luck_"):
        return read_luck_cell(path, name)
    try:
        d = json.loads(path.read_text())
        cell = {"scenario": d["scenario"], "players": int(_number(d["players"])), "deals": int(_number(d["deals"])),
                "runs": int(_number(d["runs"])), "seconds": _number(d.get("seconds", 0.0))}
        for f in ("covered", "total", "exact", "width"):
            cell[f] = {_kind(kind): _number(v) for kind, v in d[f].items()}
        cell["by_key"] = {_kind(kind): {str(key): [int(_number(n)), int(_number(c))] for key, (n, c) in per.items()}
                          for kind, per in d.get("by_key", {}).items()}
        cell["differ"] = {str(key): _number(v) for key, v in d.get("differ", {}).items()}
        ok = (isinstance(cell["scenario"], str) and cell["scenario"].split(":")[0] == name.split("_")[0]
              and f"_{cell['players']}p_{cell['deals']}d" in name)
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        ok = False
    return cell if ok else None


def read_luck_cell(path: Path, name: str) -> dict | None:
    """A cell of the luck-adjusted intervals read back as data (numbers where numbers belong,
    the pair and deals those of the name), or None."""
    try:
        d = json.loads(path.read_text())
        cell = {k: (str(v) if k in ("pair", "a", "b") else [_number(x) for x in v] if k == "truth"
                    else None if v is None and k not in ("runs", "deals") else _number(v)) for k, v in d.items()}
        cell["runs"], cell["deals"] = int(cell["runs"]), int(cell["deals"])
        ok = name == f"luck_{cell['pair']}_{cell['deals']}d" and len(cell["truth"]) == 2
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None
    return cell if ok else None


def as_cell(d: dict) -> C.Cell:
    c = C.Cell(d["scenario"], d["players"], d["deals"], d["runs"])
    for f in ("covered", "total", "exact", "width", "by_key", "differ"):
        setattr(c, f, dict(d[f]))
    return c


def luck(args) -> dict:
    from kc_sim.analysis.coverage_luck import luck_cell  # lazy: it loads the compiled core
    t = time.perf_counter()
    pair, deals, runs = args
    return {**luck_cell(pair, deals, runs), "seconds": time.perf_counter() - t}


def luck_todo(a) -> dict:
    """The cells of the luck-adjusted intervals (kc_sim.analysis.coverage_luck), by name."""
    from kc_sim.analysis.coverage_luck import LUCK_PAIRS
    return {f"luck_{p}_{d}d": (luck, (p, d, a.luck_runs)) for p in LUCK_PAIRS if a.luck_runs
            for d in (int(x) for x in a.luck_deals.split(","))}


def luck_lines(a, todo: dict, cells: dict) -> list[str]:
    from kc_sim.analysis.coverage_luck import luck_table
    names = [n for n in todo if n.startswith("luck_")]
    if not names:
        return []
    return ["## Luck-adjusted intervals (control variates at the draws)", "",
            "Real agents, two seats, both seat orders on duplicate deals; each run summed up without and with the "
            "draw control variates (`kc-sim tournament --luck`); the truth is no difference for an A/A pair, else the "
            "plain mean of 200,000 other deals.", "", luck_table([cells[n] for n in names]), ""]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=2000,
                    help="simulated tournaments per cell (2,000: +-1pp at 95%%; 0: no synthetic cell)")
    ap.add_argument("--deals", default="20,50,500", help="deals per simulated tournament")
    ap.add_argument("--runs-at", default="", help="other runs for some deals, e.g. 500:2000 (deals:runs,...)")
    ap.add_argument("--players", default="2,3,4")
    ap.add_argument("--scenarios", default=",".join(C.SCENARIOS))
    ap.add_argument("--bootstrap-deals", default="20,50", help="deals of the cells with the leaderboard's bootstrap")
    ap.add_argument("--bootstrap", type=int, default=200, help="resamples of those cells (0: none)")
    ap.add_argument("--real-runs", type=int, default=2000, help="real tournaments per real-agent cell (0: none)")
    ap.add_argument("--real-deals", default="20,50")
    ap.add_argument("--truth-deals", type=int, default=1_000_000,
                    help="deals of each scenario's truth (a quarter of them for the real agents' run)")
    ap.add_argument("--power-run", type=Path, default=None, help="a run folder for the power check (default: none)")
    ap.add_argument("--power-diff", type=float, default=0.02)
    ap.add_argument("--luck-runs", type=int, default=1000, help="runs per cell of the luck-adjusted intervals (0: none)")
    ap.add_argument("--luck-deals", default="50,500")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--out", type=Path, default=Path("results/coverage"))
    a = ap.parse_args(argv)
    for name in ("runs", "real_runs", "bootstrap"):
        if getattr(a, name) < 0:
            ap.error(f"bad --{name.replace('_', '-')} {getattr(a, name)}: expected 0 or more")
    (a.out / "cells").mkdir(parents=True, exist_ok=True)
    players = [int(x) for x in a.players.split(",")]
    runs_at = {int(d): int(n) for d, n in (x.split(":") for x in a.runs_at.split(",") if x)}
    todo = {}
    for k in players if a.runs else ():
        for scen in a.scenarios.split(","):
            for d in (int(x) for x in a.deals.split(",")):
                todo[f"{scen}_{k}p_{d}d"] = (synthetic, (scen, k, d, runs_at.get(d, a.runs), 0, a.truth_deals,
                                                               a.out))
        if a.bootstrap:
            for d in (int(x) for x in a.bootstrap_deals.split(",")):
                todo[f"difference_{k}p_{d}d_bootstrap"] = (synthetic, ("difference", k, d, runs_at.get(d, a.runs),
                                                                       a.bootstrap,
                                                                       a.truth_deals, a.out))
    for k in players:
        if a.real_runs and k in REAL:
            for d in (int(x) for x in a.real_deals.split(",")):
                todo[f"real_{k}p_{d}d"] = (real, (k, d, a.real_runs, a.truth_deals // 4))
    todo.update(luck_todo(a))
    pending = {}
    for n, t in todo.items():
        if read_cell(cell_file(a.out, n), n) is None:
            if cell_file(a.out, n).exists():
                print(f"{cell_file(a.out, n)}: not a cell this script wrote; running it again", file=sys.stderr)
            pending[n] = t
    print(f"{len(todo)} cells, {len(pending)} to run", file=sys.stderr)
    with ProcessPoolExecutor(max_workers=a.jobs) as pool:
        futures = {name: pool.submit(f, args) for name, (f, args) in pending.items()}
        for name, fut in futures.items():
            d = fut.result()
            write_whole(cell_file(a.out, name), d)
            print(f"{name}: {d['runs']} runs in {d['seconds']:.0f} s", file=sys.stderr)
    cells = {n: read_cell(cell_file(a.out, n), n) for n in todo}
    band = (f"the band of a correct interval, +-3 binomial standard errors: {100 * C.band(a.runs)[0]:.1f}-"
            f"{100 * C.band(a.runs)[1]:.1f}%" if a.runs else "no synthetic cell")
    lines = ["# Coverage of kc-sim's 95% intervals", "",
             f"Made by `python experiments/interval_coverage.py` ({a.runs:,} simulated runs per cell; {band}).",
             "A cell pools every agent or pair of a run (each run's keys count once each; pooling only narrows "
             "the spread). `exact`: a zero-width interval at the exact truth (identical agents: every deal level), "
             "counted apart.", ""]
    for k in players:
        group = [as_cell(cells[n]) for n in todo if f"_{k}p_" in n]
        if not group:
            continue
        for c, n in zip(group, [n for n in todo if f"_{k}p_" in n]):
            c.scenario = n.split(f"_{k}p_")[0] + (" (bootstrap)" if n.endswith("bootstrap") else "")
        lines += [f"## {k} players", "", C.table(group), ""]
        for n in todo:
            if n.startswith(f"real_{k}p_") and cells[n]["by_key"]:
                lines += [f"### {k} players, real agents on {cells[n]['deals']} deals, agent by agent and pair by "
                          "pair", "", C.key_tables(as_cell(cells[n])), ""]
    lines += luck_lines(a, todo, cells)
    if a.power_run is not None:
        res = C.power_check(a.power_run, a.power_diff)
        lines += ["## Power", "", f"Runs of the size `kc-sim power {a.power_run} --diff {100 * a.power_diff:g}pp` "
                  "prints, resampled from the run's own deals with the pair's true rate set to "
                  f"50% + {100 * a.power_diff:g}pp:", "",
                  "| pair | sd per deal | deals | --rounds | power | simulated runs |", "|---|---|---|---|---|---|"]
        for p in res["pairs"]:
            se = math.sqrt(p["power"] * (1 - p["power"]) / p["sims"])
            lines.append(f"| {p['pair']} | {p['sd']:.4f} | {p['deals']:,} | {p['rounds']:,} | "
                         f"{100 * p['power']:.1f}% (+-{100 * se:.1f}) | {p['sims']:,} |")
        (a.out / "power.json").write_text(json.dumps(res, indent=1))
    (a.out / "coverage.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
