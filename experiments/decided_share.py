"""Recompute a `kc-sim bench-agent -o DIR` run's figures from its round rows, independently
of kc-sim's own statistics: the share of the *decided* rounds (a seat went out; blocked
rounds left aside) the agent wins against each baseline, and its mean penalty difference.

Both are clustered by deal (a deal is one ``group``: the same cards in every seat order).
A ``kc-sim tournament -o DIR`` run at 3 or 4 seats reads the same way (the agent against the
others at its table; its penalty less their mean).
Both shares are ratios of per-deal sums (wins over decided rounds, wins over rounds),
linearised around the estimate; every interval uses Student's t with one degree of freedom
fewer than the deals.
Issue 36 calls an agent *better* than a baseline when the share's lower bound is above 50%
and the penalty difference's upper bound below 0. Use::

    kc-sim bench-agent net --baselines sampler --rounds 40000 --seed 301 -o runs/net_sampler
    python experiments/decided_share.py runs/net_sampler [AGENT]

AGENT defaults to the run's first agent name. Needs pandas and scipy (the test extra).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import NoReturn

import numpy as np
import pandas as pd
from scipy import stats


def per_deal(rows: pd.DataFrame, agent: str) -> pd.DataFrame:
    """Per deal (lineup, group): the agent's wins, the decided rounds, and the summed penalty
    difference (its penalty less the others' mean, at any number of seats)."""
    seats = [c[len("agent_"):] for c in rows.columns if c.startswith("agent_")]
    mine = sum((rows[f"agent_{s}"] == agent) * rows[f"penalty_{s}"].fillna(0) for s in seats)
    theirs = sum((rows[f"agent_{s}"] != agent) * rows[f"penalty_{s}"].fillna(0) for s in seats)
    theirs = theirs / (rows["players"] - 1)                       # the others' mean
    frame = pd.DataFrame({
        "lineup": rows["lineup"], "group": rows["group"],
        "win": (rows["winner_agent"] == agent).astype(float),
        "decided": (rows["end"] == "out").astype(float),
        "diff": (mine - theirs).astype(float), "n": 1.0,
    })
    return frame.groupby(["lineup", "group"]).sum()


def ratio(deals: pd.DataFrame, num: str, den: str, t: float) -> tuple[float, float, float]:
    """The ratio of the per-deal sums of ``num`` and ``den``, and its interval (linearised
    around the estimate, ``t`` standard errors either side)."""
    est = deals[num].sum() / deals[den].sum()
    z = (deals[num] - est * deals[den]) / deals[den].mean()
    half = t * z.std(ddof=1) / np.sqrt(len(deals))
    return est, est - half, est + half


def interval(deals: pd.DataFrame) -> dict:
    """The decided share, the win rate of all rounds and the penalty difference per round,
    each with its 95% interval."""
    t = stats.t.ppf(0.975, len(deals) - 1)
    out = {"rounds": int(deals["n"].sum()), "decided": int(deals["decided"].sum())}
    for key, num, den in (("share", "win", "decided"), ("rate", "win", "n"), ("diff", "diff", "n")):
        out[key], out[f"{key}_lo"], out[f"{key}_hi"] = ratio(deals, num, den, t)
    return out


def fail(message: str) -> NoReturn:
    """A one-line error on stderr and exit status 2, as kc-sim's own commands do."""
    print(f"decided_share: error: {message}", file=sys.stderr)
    sys.exit(2)


def read_rounds(folder: Path) -> pd.DataFrame:
    """The run's round rows; a folder that is not a finished bench-agent run is a one-line error."""
    parts = sorted((folder / "rounds").glob("part-*.parquet"))
    if not parts:
        fail(f"no round rows in {folder}/rounds (expected the folder a `kc-sim bench-agent ... -o {folder}` "
             f"run wrote)")
    try:
        return pd.read_parquet(folder / "rounds")
    except (OSError, ValueError) as e:
        fail(f"{folder}/rounds cannot be read as parquet ({e}); run bench-agent again")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="The decided-round share and the penalty difference of a "
                                                 "bench-agent run, recomputed from its rows.")
    parser.add_argument("folder", type=Path, help="a `kc-sim bench-agent -o` run folder")
    parser.add_argument("agent", nargs="?", help="the agent measured (default: the run's first)")
    args = parser.parse_args(argv)
    rows = read_rounds(args.folder)
    agent = args.agent or rows["agent_0"].iloc[0]
    seats = [c for c in rows.columns if c.startswith("agent_")]
    if not (rows[seats] == agent).any(axis=None):
        names = sorted(set(rows[seats].stack()))
        fail(f"no agent {agent!r} in {args.folder}; its agents: {', '.join(names)}")
    for lineup, part in rows.groupby("lineup"):
        names = sorted(set(part[seats].stack()))
        other = ",".join(n for n in names if n != agent)
        r = interval(per_deal(part, agent))
        print(f"{agent} vs {other}: {r['rounds']:,} rounds, {r['decided']:,} decided; decided share "
              f"{100 * r['share']:.1f}% [{100 * r['share_lo']:.1f}, {100 * r['share_hi']:.1f}]; win rate "
              f"{100 * r['rate']:.1f}% [{100 * r['rate_lo']:.1f}, {100 * r['rate_hi']:.1f}] of all rounds; penalty diff "
              f"{r['diff']:+.2f} [{r['diff_lo']:+.2f}, {r['diff_hi']:+.2f}]")


if __name__ == "__main__":
    main()
