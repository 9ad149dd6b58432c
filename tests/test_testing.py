"""kc_sim.testing.check_agent, the conformance check users run on their own agents: the
built-ins pass; an agent that plays an illegal action, one that is not reproducible, and
a compiled policy that peeks at a hidden hand each fail with a line that says why; and
``kc-sim bench-agent --check`` stops on a failure with exit 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from kc_sim.cli import main
from kc_sim.play.driver import runner
from kc_sim.testing import check_agent, round_rule_sets

HERE = Path(__file__).parent / "helpers" / "agents"
FLAKY = '''
import random
from kc_sim.play.agents.interface import PythonAgent

class Flaky(PythonAgent):
    """Legal, but draws from an unseeded generator: not reproducible."""
    def act(self, obs):
        return random.SystemRandom().choice(list(obs.legal))
'''


def test_the_rule_sets_are_every_combination_of_the_round_switches():
    sets = round_rule_sets()
    assert len(sets) == len(set(sets)) == 96


@pytest.mark.parametrize("name", ["greedy", "agents.greedy:PythonGreedy"])
def test_a_built_in_passes(name):
    report = check_agent(name, rounds=2, permuted_rounds=1)
    assert report.passed, str(report)
    assert "blind to hidden cards" in str(report)


def test_an_illegal_action_fails():
    report = check_agent(f"{HERE / 'buggy.py'}:Buggy", rounds=4, permuted_rounds=1)
    assert not report.passed and report.failure.startswith("legal play under ")
    assert "Buggy" in report.failure and "seed" in report.failure


def test_an_illegal_action_of_a_trusted_compiled_policy_fails(tmp_path, monkeypatch):
    """The loop compiled for a set of built-ins does not check their actions; the check plays
    in the generic loop, so a compiled policy taken for a built-in is checked all the same."""
    (tmp_path / "zero_agent.py").write_text(
        "from kc_sim.core.policy import compiled_policy\n\n"
        "@compiled_policy\n"
        "def always_zero(st, seat, mem):\n"
        "    return 0\n")
    monkeypatch.setattr(runner, "trusted", lambda spec: True)
    report = check_agent(f"{tmp_path / 'zero_agent.py'}:always_zero", rounds=2, permuted_rounds=1)
    assert not report.passed and report.failure.startswith("legal play under "), str(report)
    assert "always_zero" in report.failure and "illegal action" in report.failure


def test_an_unreproducible_agent_fails(tmp_path):
    (tmp_path / "flaky.py").write_text(FLAKY)
    report = check_agent(f"{tmp_path / 'flaky.py'}:Flaky", rounds=4, permuted_rounds=1)
    assert not report.passed and report.failure.startswith("reproducible:")


def test_a_policy_that_peeks_at_a_hidden_hand_fails():
    report = check_agent(f"{HERE / 'peeker.py'}:peeker", rounds=2, permuted_rounds=2)
    assert not report.passed and report.failure.startswith("blind to hidden cards:"), str(report)


def test_bench_agent_check_stops_on_a_failure(tmp_path, capsys):
    assert main(["bench-agent", f"{HERE / 'peeker.py'}:peeker", "--check", "--rounds", "200", "--jobs", "1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("kc-sim: error: ") and "peeker.py:peeker fails the conformance check: blind to hidden" in err
    assert len(err.strip().splitlines()) == 1
