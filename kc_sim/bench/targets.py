"""The speed targets ``kc-sim bench`` checks its figures against: ratios only.

A target judges only a figure measured side by side in one run: two things timed in turns
under the same conditions, the ratio taken turn by turn (:mod:`kc_sim.bench.spread`), so
the load on a shared machine cancels out of it. Absolute figures (rounds per second,
seconds) are printed for information only: on the shared 2-core development machine they
moved 1.4-2x between two runs of the same bench. Each target names one figure of
:func:`kc_sim.bench.core.run_bench`, the side it must be on and the goal: what the code
achieved on that machine when the target was set, with a margin (docs/design.md, "Speed
(measured)", has the measurements and what each ratio means). :func:`check` returns a row
per target whose figure was measured in this run (``--cold``, ``--agents``, ``--tournament``
and ``--env`` add figures), so ``make bench``, which asks for all of them, shows every
target at once. A figure measured with its spread is judged by its median and shown with
its min and max.
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
    Target("command_vs_loop", True, 0.90,
           "tournament --jobs 1, 1M rounds: its play rate vs play_rounds on the same rounds"),
    Target("command_jobs2_vs_jobs1", True, 1.05, "the 1M-round command, --jobs 2 vs --jobs 1 (whole commands)"),
    Target("first_vs_tenth_play_rate", True, 0.90, "1M rounds from an empty cache: the first run's play rate vs the tenth's"),
    Target("planner_vs_core", False, 35, "planner 2p: its cost per decision in core decisions (greedy's)"),
    Target("sampler_vs_core", False, 300, "sampler 2p: its cost per decision in core decisions (greedy's)"),
    Target("python_vs_compiled", True, 0.05, "trivial Python agent 4p: its rounds/s vs the compiled random's"),
    Target("vector_vs_aec", True, 120, "batched env vs the PettingZoo AEC env, same run"),
    Target("judge_rollouts_vs_core", True, 0.5, "planner 2p: kc-sim analyse's rollouts vs the core loop, rounds/s"),
)


def is_ratio(key: str) -> bool:
    """A figure measured side by side (the only kind a target judges)."""
    return "_vs_" in key or key.endswith("_ceiling")


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
    """Every figure on its own line, the ratios first, then the absolute figures under a
    line saying they are for information; one measured with its spread shows its median
    and range."""
    keys = [k for k in figures if not is_spread_key(figures, k)]
    w = max(map(len, keys), default=0)

    def line(k):
        v = figures[k]
        text = f"{v:>14,.3f}" if isinstance(v, float) else f"{v!s:>14}"
        spread = spread_of(figures, k)
        return f"{k:{w}s} {text}" + (f"  ({_range(spread)})" if spread else "")

    ratios = [line(k) for k in keys if is_ratio(k)]
    info = [line(k) for k in keys if not is_ratio(k)]
    out = ["ratios, measured side by side:", *ratios] if ratios else []
    if info:
        out += ([""] if out else []) + [INFORMATION, *info]
    return "\n".join(out)


INFORMATION = ("for information (absolute figures: they move with the processor and 1.4-2x with other work "
               "on the machine; no target judges them):")
