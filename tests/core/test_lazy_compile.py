"""The generic loops and ``random_policy`` compile on first use, not on import: a run that
needs only the round loop never compiles the match loop (seconds from an empty cache)."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from kc_sim.core import layout, loop, policy
from kc_sim.game.rules import parse_rules
from kc_sim.play.driver import runner
from kc_sim.play.agents.registry import load_agents
from tests.helpers.compile_events import LISTENER

_NO_COMPILE_ON_IMPORT = LISTENER + r"""
event.register("numba:compile", Listener())
import kc_sim.core.loop as loop
import kc_sim.core.policy as policy
import kc_sim.core.policy_set
import kc_sim.play.driver.runner
present = [n for n in ("play_round", "play_rounds", "play_matches") if n in vars(loop)]
print(json.dumps({"compiled": compiled, "present": present, "random": "random_policy" in vars(policy)}))
"""


def test_importing_the_loop_compiles_nothing(tmp_path):
    """From an empty numba cache, importing the core loop, the policy module, the policy sets
    and the runner compiles no function at all."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", _NO_COMPILE_ON_IMPORT], env=env, capture_output=True,
                         text=True, check=True, timeout=300)
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got == {"compiled": [], "present": [], "random": False}


def test_compile_generic_gives_the_module_loops():
    rounds = loop.compile_generic("rounds")
    assert rounds is loop.play_rounds and loop.compile_generic("rounds") is rounds
    matches = loop.compile_generic("matches")
    assert matches is loop.play_matches
    from kc_sim.core.loop import play_round
    assert play_round is loop.play_round
    with pytest.raises(ValueError):
        loop.compile_generic("round")
    with pytest.raises(AttributeError):
        loop.no_such_name  # noqa: B018


@pytest.mark.parametrize("name", ["play_round", "play_rounds", "play_matches"])
def test_generic_loops_are_fixed_signature(name):
    """As with ``nb.njit(sig)``: one signature (the policy tuple of function pointers),
    compiling disabled, so a call with other types is refused rather than compiled."""
    fn = getattr(loop, name)
    assert len(fn.signatures) == 1 and not fn._can_compile
    sig = {"play_round": loop.round_sig, "play_rounds": loop.rounds_sig,
           "play_matches": loop.matches_sig}[name](loop.POLICIES_TYPE)
    assert fn.signatures[0] == sig.args


def test_random_policy_is_one_dispatcher():
    from kc_sim.core.policy import random_policy
    assert policy.random_policy is random_policy
    assert random_policy.py_func.__qualname__ == "random_policy"
    assert random_policy.signatures == [policy.POLICY_SIG.args]
    with pytest.raises(AttributeError):
        policy.no_such_name  # noqa: B018


def test_unused_seats_repeat_the_first_policy():
    specs = load_agents(["greedy", "random"])
    pols = runner.policies_tuple(specs)
    assert len(pols) == layout.MAX_SEATS
    assert pols[:2] == (specs[0].policy, specs[1].policy)
    assert all(p is specs[0].policy for p in pols[2:])


def test_padding_does_not_change_rounds():
    """Rounds through the generic loop are the same whatever pads the unused seats."""
    specs = load_agents(["greedy", "random", "pile-merger"])
    seeds = np.arange(300, dtype=np.int64)
    codes = parse_rules("classic").codes()
    rows = []
    for pad in (specs[0].policy, policy.random_policy):
        pols = tuple(s.policy for s in specs) + (pad,) * (layout.MAX_SEATS - len(specs))
        out = np.zeros((len(seeds), loop.ROUND_COLS), dtype=np.int64)
        assert loop.play_rounds(seeds, len(specs), codes, pols, out) == -1
        rows.append(out)
    np.testing.assert_array_equal(rows[0], rows[1])
