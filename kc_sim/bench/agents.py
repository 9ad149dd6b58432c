"""Benchmark of the agents: rounds per second per core in self-play.

Every built-in agent plays ``rounds`` rounds against copies of itself through the
compiled loop (``kc_sim.play.driver.runner.play_rounds``, one core), and a trivial Python agent
(:class:`FirstLegal`: ``return obs.legal[0]``) plays ``python_rounds`` rounds through
the Python loop. A small warm-up runs first, so compilation and cache loading are not
timed. Rates are per CPU-second of this process (``time.process_time``), which is the
per-core rate even on a busy machine; the wall-clock rate is reported beside it. Each
agent's rounds are played as ``REPEATS`` batches of different deals, and its rate is the
median batch's, with the slowest and fastest beside it.

    from kc_sim.bench.agents import bench_agents
    for row in bench_agents(rounds=200_000): print(row)
"""

from __future__ import annotations

import time

import numpy as np

from kc_sim.core import loop
from kc_sim.game.rules import parse_rules
from kc_sim.play.agents.interface import AgentSpec, PythonAgent
from kc_sim.play.agents.registry import BASELINES, load_agent
from kc_sim.play.driver.runner import play_rounds

#: targets: rounds/s per core in 4-player classic self-play (the baselines' by default)
COMPILED_TARGET = 200_000
PYTHON_TARGET = 30_000
TARGETS = {"planner": 10_000, "sampler": 1_000}
#: the strong agents' targets in 2-player self-play (issues 13 and 24), and the rounds each is timed on
STRONG_2P = {"planner": (15_000, 30_000), "sampler": (1_500, 3_000)}
#: batches each agent's rounds are timed in
REPEATS = 5
#: agents timed by default: the baselines and the planner (the sampler, at about a thousand
#: rounds/s, only when named)
DEFAULT_AGENTS = (*BASELINES, "planner")


class FirstLegal(PythonAgent):
    """The trivial Python agent of the benchmark: always the first legal action."""

    name = "python-first-legal"

    def act(self, obs):
        return obs.legal[0]


def _time(specs, seeds, rules) -> tuple[float, float, np.ndarray]:
    c0, w0 = time.process_time(), time.perf_counter()
    rows = play_rounds(specs, seeds, rules)
    return time.process_time() - c0, time.perf_counter() - w0, rows


def _timed_batches(specs, seeds, rules, repeats: int) -> tuple[list[float], float, list[np.ndarray]]:
    """(rounds per CPU-second of each batch, wall seconds of all, rows of each batch)."""
    rates, wall, rows = [], 0.0, []
    for part in np.array_split(seeds, max(1, min(repeats, len(seeds)))):
        cpu, w, r = _time(specs, part, rules)
        rates.append(len(part) / max(cpu, 1e-9))
        wall += w
        rows.append(r)
    return rates, wall, rows


def bench_agents(rounds: int = 200_000, players: int = 4, rules: str = "classic", *,
                 python_rounds: int | None = None, agents=None, seed: int = 1, repeats: int = REPEATS) -> list[dict]:
    """Rounds/s per core in self-play for each agent of ``DEFAULT_AGENTS`` (or the given names)
    and for a trivial Python agent. Returns one dict per agent: ``agent``, ``kind``
    (compiled / python), ``rounds``, ``wall_s``, ``rounds_per_s`` (per CPU-second, the
    median of ``repeats`` batches) with ``rounds_per_s_min`` and ``rounds_per_s_max``,
    ``wall_rounds_per_s``, ``turns_per_round``, ``actions_per_round``, ``target`` and
    ``ok`` (median rate >= target)."""
    rs = parse_rules(rules)
    rs.check_players(players)
    if python_rounds is None:
        python_rounds = max(1, rounds // 20)
    names = DEFAULT_AGENTS if agents is None else list(agents)
    entries = [(load_agent(n), rounds) for n in names]
    if python_rounds:
        entries.append((AgentSpec(FirstLegal.name, FirstLegal.__doc__, factory=FirstLegal), python_rounds))
    out = []
    for spec, n in entries:
        specs = [spec] * players
        play_rounds(specs, np.arange(min(n, 2000), dtype=np.int64) + seed * 1_000_003 + 10**9, rs)   # warm-up
        seeds = np.arange(n, dtype=np.int64) + seed * 1_000_003
        rates, wall, parts = _timed_batches(specs, seeds, rs, repeats)
        rows = np.concatenate(parts)
        target = TARGETS.get(spec.name, COMPILED_TARGET) if spec.compiled else PYTHON_TARGET
        rate = float(np.median(rates))
        out.append({
            "agent": spec.name,
            "kind": "compiled" if spec.compiled else "python",
            "players": players,
            "rules": rules,
            "rounds": n,
            "wall_s": round(wall, 4),
            "rounds_per_s": round(rate),
            "rounds_per_s_min": round(min(rates)),
            "rounds_per_s_max": round(max(rates)),
            "wall_rounds_per_s": round(n / max(wall, 1e-9)),
            "turns_per_round": round(float(rows[:, loop.C_TURNS].mean()), 2),
            "actions_per_round": round(float(rows[:, loop.C_ACTIONS].mean()), 2),
            "target": target,
            "ok": rate >= target,
        })
    return out


def strong_agents_2p(scale: float = 1.0) -> dict:
    """``agent_planner_2p_rounds_per_s`` and ``agent_sampler_2p_rounds_per_s``: the strong
    agents in 2-player classic self-play, rounds per CPU-second (with their targets)."""
    out = {}
    for name, (target, n) in STRONG_2P.items():
        row, = bench_agents(rounds=max(50, int(n * scale)), players=2, agents=[name], python_rounds=0)
        key = f"agent_{name}_2p_rounds_per_s"
        out.update({key: row["rounds_per_s"], f"{key}_min": row["rounds_per_s_min"],
                    f"{key}_max": row["rounds_per_s_max"], f"agent_{name}_2p_target": target})
    return out


if __name__ == "__main__":
    for row in bench_agents():
        print(f"{row['agent']:>20} {row['kind']:>8} {row['rounds_per_s']:>10,} rounds/s per core "
              f"(wall {row['wall_rounds_per_s']:,}; target {row['target']:,}: {'ok' if row['ok'] else 'MISSED'})")
