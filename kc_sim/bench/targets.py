"""The speed targets ``kc-sim bench`` checks its figures against.

Each target names one figure of :func:`kc_sim.bench.core.run_bench`, the side it must be
on and the goal. :func:`check` returns a row per target whose figure was measured in this
run (``--cold``, ``--agents``, ``--tournament`` and ``--env`` add figures), so ``make bench``,
which asks for all of them, shows every target at once. A figure measured with its spread
(:mod:`kc_sim.bench.spread`) is judged by its median and shown with its min and max.
"""

from __future__ import annotations

from dataclasses import dataclass

from kc_sim.bench.spread import is_spread_key, spread_of


@dataclass(frozen=True)
class Target:
    key: str          # the figure
    at_least: bool    # True: figure >= goal; False: figure <= goal
    goal: float
    what: str

    def met(self, value: float) -> bool:
        return value >= self.goal if self.at_least else value <= self.goal


TARGETS = (
    Target("specialised_vs_inline", True, 0.85, "greedy 4p: specialised loop vs the hand-inlined loop"),
    Target("command_1m_rounds_s", False, 3.0, "kc-sim tournament --agents greedy,merger --rounds 1000000 (s)"),
    Target("command_jobs2_vs_jobs1", True, 1.7, "the same 1M rounds, --jobs 2 vs --jobs 1 (whole commands)"),
    # Amdahl's bound on the ratio above (kc_sim.bench.tournament): below the goal, no scheduling can meet it
    Target("command_jobs2_ceiling", True, 1.7, "  its ceiling: --jobs 1's play halved, start-up kept (Amdahl)"),
    Target("import_tournament_s", False, 0.5, "import of the tournament package (s)"),
    Target("cold_command_s", False, 10.0, "first kc-sim tournament --agents greedy,merger, empty cache (s)"),
    Target("first_vs_tenth_play_rate", True, 0.90, "1M rounds from an empty cache: the first run's play rate vs the tenth's"),
    Target("agent_planner_2p_rounds_per_s", True, 15_000, "planner, 2-player self-play, rounds/s per core"),
    Target("agent_sampler_2p_rounds_per_s", True, 1_500, "sampler, 2-player self-play, rounds/s per core"),
    Target("agent_python-first-legal_rounds_per_s", True, 30_000,
           "trivial Python agent, 4 players, rounds/s per core"),
    Target("vector_env_steps_per_s", True, 1_000_000, "batched env, B=1024, random legal actions, steps/s per core"),
    Target("vector_vs_aec", True, 50, "batched env vs the PettingZoo AEC env, same run"),
)


def check(figures: dict) -> list[dict]:
    """One row per target measured in ``figures``: ``key``, ``what``, ``value`` (the median
    when measured with its spread), ``spread`` (``(min, max)`` or None), ``goal``, ``side``
    (">=" or "<=") and ``met``."""
    return [{"key": t.key, "what": t.what, "value": figures[t.key], "spread": spread_of(figures, t.key),
             "goal": t.goal, "side": ">=" if t.at_least else "<=", "met": t.met(figures[t.key])}
            for t in TARGETS if t.key in figures]


def _num(x: float) -> str:
    return f"{x:,.0f}" if abs(x) >= 100 else f"{x:,.3f}".rstrip("0").rstrip(".")


def _range(spread) -> str:
    return f"{_num(spread[0])}-{_num(spread[1])}" if spread else ""


def format_rows(rows: list[dict]) -> str:
    """The targets as a text table (what the command prints after the figures): the
    measured median, its range over the repeats, the goal and whether it is met."""
    if not rows:
        return ""
    w = max(len(r["what"]) for r in rows)
    lines = [f"{'target':{w}s} {'measured':>12s} {'range':>21s} {'goal':>13s}  met"]
    for r in rows:
        goal = f"{r['side']} {_num(r['goal'])}"
        lines.append(f"{r['what']:{w}s} {_num(r['value']):>12s} {_range(r.get('spread')):>21s} {goal:>13s}  "
                     f"{'yes' if r['met'] else 'NO'}")
    return "\n".join(lines)


def format_figures(figures: dict) -> str:
    """Every figure on its own line; one measured with its spread shows its median and range."""
    keys = [k for k in figures if not is_spread_key(figures, k)]
    w = max(map(len, keys), default=0)
    lines = []
    for k in keys:
        v = figures[k]
        text = f"{v:>14,.3f}" if isinstance(v, float) else f"{v!s:>14}"
        spread = spread_of(figures, k)
        lines.append(f"{k:{w}s} {text}" + (f"  ({_range(spread)})" if spread else ""))
    return "\n".join(lines)
