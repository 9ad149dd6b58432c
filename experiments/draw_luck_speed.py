"""What the draw control variates (``--luck``) cost in play speed, measured in one run: the same
rounds played with and without them, in turns, per CPU-second (median of the repeats).

    python experiments/draw_luck_speed.py                                  # greedy vs pile-merger
    python experiments/draw_luck_speed.py --agents net,sampler --rounds 400 --repeats 3
    PYTHONPATH=../main python experiments/draw_luck_speed.py --plain-only  # default play of another checkout

Prints the rates and their ratio; with a factor ``F`` measured by ``kc-sim tournament --luck``
the luck-adjusted estimate gives ``F x (rate with / rate without)`` effective rounds per
second relative to the plain one: above 1 it pays. (Results in results/README.md.)
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from kc_sim.play.driver.runner import play_rounds


def rates(agents, rounds: int, repeats: int, rules: str = "classic", plain_only: bool = False) -> dict:
    """Rounds per CPU-second without and with the sums, the two played in turns on the same seeds
    (``plain_only``: without only, calling ``play_rounds`` as any checkout has it)."""
    seeds = np.arange(rounds, dtype=np.int64) + 12345
    kinds = (False,) if plain_only else (False, True)
    for luck in kinds:                                 # compile / load the loops first
        play_rounds(agents, seeds[:10], rules, **({"luck": True} if luck else {}))
    out = {False: [], True: []}
    for _ in range(repeats):
        for luck in kinds:
            t = time.process_time()
            play_rounds(agents, seeds, rules, **({"luck": True} if luck else {}))
            out[luck].append(rounds / max(time.process_time() - t, 1e-9))
    return {k: statistics.median(v) for k, v in (("plain", out[False]), ("luck", out[True])) if v}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--agents", default="greedy,pile-merger")
    ap.add_argument("--rounds", type=int, default=200_000)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--plain-only", action="store_true", help="only the rate without the sums")
    a = ap.parse_args(argv)
    r = rates(a.agents.split(","), a.rounds, a.repeats, plain_only=a.plain_only)
    if a.plain_only:
        print(f"{a.agents}: {r['plain']:,.0f} rounds/s (median of {a.repeats} repeats of {a.rounds:,} rounds, "
              "per CPU-second)")
        return 0
    print(f"{a.agents}: {r['plain']:,.0f} rounds/s without the sums, {r['luck']:,.0f} with them "
          f"(ratio {r['luck'] / r['plain']:.2f}; median of {a.repeats} repeats of {a.rounds:,} rounds, per CPU-second)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
