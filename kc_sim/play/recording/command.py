"""``kc-sim record``: play rounds between named agents and write their game records."""

from __future__ import annotations

from kc_sim.core.rng import derive
from kc_sim.game.rules import RuleSet
from kc_sim.play.recording.recorded import record_round
from kc_sim.play.agents.registry import load_agents
from kc_sim.records.format import write_records


def _round_seed(run_seed: int, i: int) -> int:
    """The deal seed of round ``i`` of a ``kc-sim record`` run (not a match's rounds:
    :func:`kc_sim.core.match.round_seed`)."""
    return int(derive(run_seed, i))


def record_rounds(path, names: list[str], rounds: int, seed: int, rules: RuleSet):
    """Play ``rounds`` rounds (round i dealt from ``_round_seed(seed, i)``, dealer drawn from
    that seed) and write their records to ``path``, each naming the ``--seed`` it came from
    (``run_seed``, a field readers may ignore)."""
    agents = load_agents(names)

    def gen():
        for i in range(rounds):
            s = _round_seed(seed, i)
            yield {**record_round(agents, s, rules, round=i), "run_seed": int(seed)}   # dealer drawn from the seed

    return write_records(path, gen())
