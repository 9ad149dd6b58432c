"""The compiled core against the reference: every combination of the round switches,
every player count, every decision of many random rounds."""

import pytest

from tests.helpers.differential import play_both, rule_sets, sweep

RULE_SETS = rule_sets()


@pytest.mark.parametrize("rules", RULE_SETS, ids=[r.spec().rsplit(",match", 1)[0] for r in RULE_SETS])
def test_core_agrees_with_reference(rules):
    assert sweep(rules, min_decisions=10_000) >= 10_000


@pytest.mark.slow
@pytest.mark.parametrize("rules", RULE_SETS, ids=[r.spec().rsplit(",match", 1)[0] for r in RULE_SETS])
def test_core_agrees_with_reference_long(rules):
    assert sweep(rules, min_decisions=1_000_000, seed0=10_000_000) >= 1_000_000


@pytest.mark.parametrize("stop_bias", [0.0, 0.6, 1.0])
def test_core_agrees_with_passive_and_eager_play(stop_bias):
    """Always-play, often-stop and always-stop players reach blocked rounds and long stocks."""
    for rules in RULE_SETS[::7]:
        for seed in range(5):
            play_both(rules, 2 + seed % 3, seed, stop_bias=stop_bias)
