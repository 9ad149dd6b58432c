"""Benchmark of the agents: their rates in self-play, and their costs against the core's.

**For information** (:func:`bench_agents`): every built-in agent plays ``rounds`` rounds
against copies of itself through the compiled loop (``kc_sim.play.driver.runner.play_rounds``,
one core), and a trivial Python agent (:class:`FirstLegal`: ``return obs.legal[0]``) plays
``python_rounds`` rounds through the Python loop; rounds per CPU-second of this process
(``time.process_time``, the per-core rate even on a busy machine), the median of ``REPEATS``
batches of different deals with the slowest and fastest beside it, the wall-clock rate beside
them. Absolute rates move with the processor and with other work on the machine (1.4-2x
between two runs of the same bench on the shared development machine), so no target judges
them.

**Side by side** (:func:`agents_vs_core`), what the targets judge: each comparison plays its
agents in turns, batch after batch on different deals, ``TURNS`` times, and a ratio is
taken within each turn (the batches of one turn ran under the same conditions), given as its
median with the min and max over the turns (:mod:`kc_sim.bench.spread`):

* ``planner_vs_core``, ``sampler_vs_core``: the agent's CPU cost per decision in 2-player
  classic self-play over the core's, greedy's in the same loop (the loop compiled for the
  agents of each side, :func:`kc_sim.play.driver.runner.compiled_loop`): how many core
  decisions one of the agent's decisions costs. A decision is an action or a stop
  (:func:`decisions`); the planner searches at the start of its turn and replays the line
  it chose, so its cost per decision is the search's cost spread over the turn's actions.
* ``python_vs_compiled``: rounds per CPU-second of the trivial Python agent, 4 players, over
  those of the compiled ``random`` agent on the same deals: the speed a Python agent keeps
  of the compiled loop's.

A small warm-up runs first, so compilation and cache loading are not timed.

    from kc_sim.bench.agents import bench_agents
    for row in bench_agents(rounds=200_000): print(row)
"""

from __future__ import annotations

import time

import numpy as np

from kc_sim.bench.spread import with_spread
from kc_sim.core import layout as L
from kc_sim.core import loop
from kc_sim.game.rules import parse_rules
from kc_sim.play.agents.interface import AgentSpec, PythonAgent
from kc_sim.play.agents.registry import BASELINES, load_agent
from kc_sim.play.driver.runner import play_rounds

#: batches each agent's rounds are timed in
REPEATS = 5
#: turns of the side-by-side comparisons
TURNS = 7
#: agents timed by default: the baselines and the planner (the sampler, at about two thousand
#: rounds/s, only when named)
DEFAULT_AGENTS = (*BASELINES, "planner")
#: the comparisons of :func:`agents_vs_core`: figure -> (agent, yardstick, players, what it
#: measures, rounds of the agent and of the yardstick per turn)
COMPARISONS = {
    "planner_vs_core": ("planner", "greedy", 2, "decision", 4_000, 60_000),
    "sampler_vs_core": ("sampler", "greedy", 2, "decision", 400, 60_000),
    "python_vs_compiled": ("python-first-legal", "random", 4, "round", 1_500, 60_000),
}


class FirstLegal(PythonAgent):
    """The trivial Python agent of the benchmark: always the first legal action."""

    name = "python-first-legal"

    def act(self, obs):
        return obs.legal[0]


def bench_spec(name: str) -> AgentSpec:
    """The agent ``name`` as the benchmarks play it: any registered agent, or the
    benchmarks' own ``FirstLegal`` (the cheapest Python agent, a floor for the call cost)."""
    if name == FirstLegal.name:
        return AgentSpec(FirstLegal.name, FirstLegal.__doc__, factory=FirstLegal)
    return load_agent(name)


def decisions(rows: np.ndarray) -> int:
    """Policy decisions in round rows: every action, and a stop ending each turn but a last
    one ended by going out."""
    return int(rows[:, loop.C_ACTIONS].sum() + rows[:, loop.C_TURNS].sum()
               - (rows[:, loop.C_END] == L.END_OUT).sum())


def timed_rounds(specs, seeds, rules) -> tuple[float, float, np.ndarray]:
    """Play one round per seed with ``specs``: (CPU seconds, wall seconds, the round rows)."""
    c0, w0 = time.process_time(), time.perf_counter()
    rows = play_rounds(specs, seeds, rules)
    return time.process_time() - c0, time.perf_counter() - w0, rows


def _timed_batches(specs, seeds, rules, repeats: int) -> tuple[list[float], float, list[np.ndarray]]:
    """(rounds per CPU-second of each batch, wall seconds of all, rows of each batch)."""
    rates, wall, rows = [], 0.0, []
    for part in np.array_split(seeds, max(1, min(repeats, len(seeds)))):
        cpu, w, r = timed_rounds(specs, part, rules)
        rates.append(len(part) / max(cpu, 1e-9))
        wall += w
        rows.append(r)
    return rates, wall, rows


def _warm(specs, rules, n: int, seed: int) -> None:
    play_rounds(specs, np.arange(min(n, 2000), dtype=np.int64) + seed * 1_000_003 + 10**9, rules)


def bench_agents(rounds: int = 200_000, players: int = 4, rules: str = "classic", *,
                 python_rounds: int | None = None, agents=None, seed: int = 1, repeats: int = REPEATS) -> list[dict]:
    """Rounds/s per core in self-play for each agent of ``DEFAULT_AGENTS`` (or the given names)
    and for a trivial Python agent, for information (module doc). Returns one dict per agent:
    ``agent``, ``kind`` (compiled / python), ``rounds``, ``wall_s``, ``rounds_per_s`` (per
    CPU-second, the median of ``repeats`` batches) with ``rounds_per_s_min`` and
    ``rounds_per_s_max``, ``wall_rounds_per_s``, ``turns_per_round``, ``actions_per_round``."""
    rs = parse_rules(rules)
    rs.check_players(players)
    if python_rounds is None:
        python_rounds = max(1, rounds // 20)
    names = DEFAULT_AGENTS if agents is None else list(agents)
    entries = [(load_agent(n), rounds) for n in names]
    if python_rounds:
        entries.append((bench_spec(FirstLegal.name), python_rounds))
    out = []
    for spec, n in entries:
        specs = [spec] * players
        _warm(specs, rs, n, seed)
        seeds = np.arange(n, dtype=np.int64) + seed * 1_000_003
        rates, wall, parts = _timed_batches(specs, seeds, rs, repeats)
        rows = np.concatenate(parts)
        out.append({
            "agent": spec.name,
            "kind": "compiled" if spec.compiled else "python",
            "players": players,
            "rules": rules,
            "rounds": n,
            "wall_s": round(wall, 4),
            "rounds_per_s": round(float(np.median(rates))),
            "rounds_per_s_min": round(min(rates)),
            "rounds_per_s_max": round(max(rates)),
            "wall_rounds_per_s": round(n / max(wall, 1e-9)),
            "turns_per_round": round(float(rows[:, loop.C_TURNS].mean()), 2),
            "actions_per_round": round(float(rows[:, loop.C_ACTIONS].mean()), 2),
        })
    return out


def in_turns(sides: dict[str, tuple[str, int]], players: int, rules: str = "classic", turns: int = TURNS,
             seed: int = 1) -> dict[str, dict[str, list[float]]]:
    """Self-play of each side (name -> (agent, rounds per turn)), in turns: turn ``t`` plays a
    batch of each side on the deals of that turn, one side after the other. Returns per side
    the rounds per CPU-second and the CPU-nanoseconds per decision of each turn."""
    rs = parse_rules(rules)
    specs = {side: [bench_spec(agent)] * players for side, (agent, _) in sides.items()}
    for side, (_, n) in sides.items():
        _warm(specs[side], rs, n, seed)
    out = {side: {"rounds_per_s": [], "ns_per_decision": []} for side in sides}
    for t in range(turns):
        for side, (_, n) in sides.items():
            seeds = np.arange(n, dtype=np.int64) + (seed * turns + t) * 1_000_003
            cpu, _, rows = timed_rounds(specs[side], seeds, rs)
            cpu = max(cpu, 1e-9)
            out[side]["rounds_per_s"].append(n / cpu)
            out[side]["ns_per_decision"].append(cpu * 1e9 / max(decisions(rows), 1))
    return out


def agents_vs_core(scale: float = 1.0, turns: int = TURNS) -> dict:
    """The comparisons of :data:`COMPARISONS` (module doc), each with its spread over the
    turns, and the rates they come from (for information); ``scale`` multiplies the rounds."""
    figures = {}
    for key, (agent, yardstick, players, per, n, n_core) in COMPARISONS.items():
        got = in_turns({"agent": (agent, max(20, int(n * scale))), "core": (yardstick, max(100, int(n_core * scale)))},
                       players, turns=turns)
        a, c = got["agent"], got["core"]
        mine, core = f"agent_{agent}_{players}p", f"agent_{yardstick}_{players}p_beside_{agent}"   # the yardstick
        figures.update(with_spread(f"{mine}_rounds_per_s", a["rounds_per_s"], 0))
        figures.update(with_spread(f"{core}_rounds_per_s", c["rounds_per_s"], 0))
        if per == "decision":      # cost: the agent's ns per decision over the core's
            figures.update(with_spread(f"{mine}_ns_per_decision", a["ns_per_decision"], 1))
            figures.update(with_spread(f"{core}_ns_per_decision", c["ns_per_decision"], 1))
            ratios = [x / y for x, y in zip(a["ns_per_decision"], c["ns_per_decision"])]
        else:                      # speed: the agent's rounds/s over the core's
            ratios = [x / y for x, y in zip(a["rounds_per_s"], c["rounds_per_s"])]
        figures.update(with_spread(key, ratios, 4))
    return figures


if __name__ == "__main__":
    for row in bench_agents():
        print(f"{row['agent']:>20} {row['kind']:>8} {row['rounds_per_s']:>10,} rounds/s per core "
              f"(wall {row['wall_rounds_per_s']:,})")
    for k, v in agents_vs_core().items():
        print(f"{k:40s} {v}")
