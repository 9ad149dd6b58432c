"""Issue 37, item 7: do the judge's error rates order agents as their tournaments do?

A 2-player round robin of ``random``, ``greedy``, ``planner`` and ``sampler`` is played with
``kc-sim tournament ... --records K`` (K game records, spread over every line-up and seating),
then ``N`` of the saved rounds are drawn at random and judged
(:func:`kc_sim.analysis.judged.analyse_run`, as ``kc-sim analyse RUN_DIR --sample N`` does,
with the default evaluator ``planner``). Printed per agent: its win rate in the tournament
(every round of the run) and, over the sampled rounds, its error rate (mean loss per judged
decision), loss per round and accuracy with 95% intervals clustered by round. The tournaments
(results/README.md section 8) rank them sampler > planner > greedy > random; the check is
that the error rates rank them the other way round (bigger error = weaker).

Use::

    python experiments/judge_ordering.py --rounds 1200 --records 240 --sample 120 --jobs 2 --out runs/judge_order

``--jobs J`` judges the sample in J processes, as ``kc-sim analyse --jobs J`` does (each
record's figures depend only on the seed and its index, so the split changes nothing). ``--no-luck`` is the default here (the luck
figures are not needed for the ordering; ``--luck`` measures them too).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

AGENTS = ("random", "greedy", "planner", "sampler")


def tournament(out: Path, rounds: int, records: int, seed: int, jobs: int) -> None:
    if (out / "records.jsonl").is_file():
        return
    cmd = [sys.executable, "-m", "kc_sim.cli", "tournament", "--agents", ",".join(AGENTS), "--players", "2",
           "--rounds", str(rounds), "--records", str(records), "--seed", str(seed), "--jobs", str(jobs),
           "--out", str(out)]
    subprocess.run(cmd, check=True)


def win_rates(out: Path) -> dict:
    """Each agent's share of the tournament's rounds it won (every round of the run)."""
    import pandas as pd

    rows = pd.concat(pd.read_parquet(p) for p in sorted((out / "rounds").glob("*.parquet")))
    seats = [c[len("agent_"):] for c in rows.columns if c.startswith("agent_")]
    out_ = {}
    for a in AGENTS:
        played = sum((rows[f"agent_{s}"].astype(str) == a) for s in seats)
        won = (rows["winner_agent"].astype(str) == a)
        out_[a] = float(won.sum() / played.sum())
    return out_


def judge(out: Path, sample: int, seed: int, budget: int, luck: bool, jobs: int) -> dict:
    from kc_sim.analysis.judged import analyse_run, judging_pool

    with judging_pool(jobs) as spread:
        rep = analyse_run(out, sample, seed=seed, budget=budget, luck=luck, **spread)
    return {"sampled": rep["sampled"], "report": rep, "agents": rep["agents"]}


def show(fig) -> str:
    if fig is None:
        return "-"
    return f"{fig[0]:.2f}" if fig[1] is None else f"{fig[0]:.2f} [{fig[1]:.2f}, {fig[2]:.2f}]"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=1200, help="tournament rounds (every line-up and seating)")
    ap.add_argument("--records", type=int, default=240, help="game records the tournament saves")
    ap.add_argument("--sample", type=int, default=120, help="saved rounds drawn at random and judged")
    ap.add_argument("--seed", type=int, default=37)
    ap.add_argument("--budget", type=int, default=256, help="most worlds per decision")
    ap.add_argument("--luck", action="store_true", help="measure luck too (slower)")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--out", type=Path, default=Path("runs/judge_ordering"))
    a = ap.parse_args(argv)
    started = time.perf_counter()
    tournament(a.out, a.rounds, a.records, a.seed, a.jobs)
    rates = win_rates(a.out)
    res = judge(a.out, a.sample, a.seed, a.budget, a.luck, a.jobs)
    (a.out / "judge_ordering.json").write_text(json.dumps({k: v for k, v in res.items() if k != "report"}))
    figs = res["agents"]
    print(f"{a.sample} of {a.records} saved rounds of a {a.rounds}-round 2-player round robin (seed {a.seed}), "
          f"judged by planner, budget {a.budget}; {time.perf_counter() - started:.0f} s")
    print(f"{'agent':8} {'win rate':>9} {'rounds':>6} {'judged':>6}  {'error rate [95% CI]':22} "
          f"{'loss per round':22} {'accuracy %':22}")
    for name in AGENTS:
        f = figs[name]
        print(f"{name:8} {100 * rates[name]:8.1f}% {f['rounds']:6d} {f['judged']:6d}  {show(f['error_rate']):22} "
              f"{show(f['loss_per_round']):22} {show(f['accuracy']):22}")
    by_win = sorted(AGENTS, key=lambda n: rates[n])
    by_error = sorted(AGENTS, key=lambda n: -figs[n]["error_rate"][0])
    print("tournament order (weakest first):", " < ".join(by_win))
    print("error-rate order (largest first):", " < ".join(by_error),
          "- the same" if by_win == by_error else "- DIFFERENT")
    return 0 if by_win == by_error else 1


if __name__ == "__main__":
    sys.exit(main())
