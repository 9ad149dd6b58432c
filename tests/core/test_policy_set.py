"""The loops compiled for a set of policies (kc_sim.core.policy_set) and the hand-inlined
reference loop (kc_sim.core.inline_greedy) play exactly the rounds of the generic loop
(function pointers): same rows for the same seeds, every player count and several rule sets,
in rounds and in matches, with the built-ins trusted (compiled in, not checked, their memory
prepared as they declare). An untrusted policy in a set keeps the check: an illegal action
stops the run at the same round with the same row, a raising policy raises the same, also
through the runner's AgentFault. Which loop plays is decided by the policies alone."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numba as nb
import numpy as np
import pytest

from agents.counterfactual import COUNTERFACTUALS
from kc_sim.core import inline_greedy, layout, loop
from kc_sim.core.bits import lowest
from kc_sim.core.layout import HAND, PLAYERS, STOP, TURNS
from kc_sim.core.legal import count_plays, nth_play
from kc_sim.core.policy import MEM_SIZE, compiled_policy, random_policy
from kc_sim.core.policy_set import PolicySet, PolicySetType, policy_ref
from kc_sim.core.rng import below
from kc_sim.game.cards import ALL_MASK
from kc_sim.game.rules import parse_rules
from kc_sim.play.agents import registry
from kc_sim.play.driver import runner
from kc_sim.play.agents.interface import AgentSpec
from kc_sim.play.agents.registry import load_agent
from tests.helpers.compile_events import LISTENER

GREEDY, RANDOM, KING, MERGER = (load_agent(n) for n in ("greedy", "random", "king-first", "merger"))
RULES = ("classic", "draw_first", "draw=if_stuck,scoring=face,must_play_kings=true",
         "decks=2,king_on_empty_side=false,layout_kings=to_corner")
MIXED = (RANDOM, GREEDY, MERGER, KING)


@compiled_policy
def flaky(st, seat, mem):
    """Random legal plays (its own generator); in the seat-rounds whose first draw is 5 mod 41
    it fails after turn 6: with 3 players it raises, otherwise it places a card it does not hold."""
    if mem[1] == 0:
        mem[1] = 1 + below(mem, 0, 41)
    if mem[1] == 6 and st[TURNS] > 6:
        if st[PLAYERS] == 3:
            raise ValueError("planned failure")
        return lowest(~st[HAND + 2 * seat] & ALL_MASK) * 8
    k = count_plays(st)
    if k == 0:
        return STOP
    return nth_play(st, below(mem, 0, k))


FLAKY = AgentSpec("flaky", "", policy=flaky, mem_words=0)      # a user policy: its mem_words is not honoured


def _pad(pols):
    return tuple(pols) + (random_policy,) * (layout.MAX_SEATS - len(pols))


def _set(specs):
    return runner.policy_set(list(specs))


def _rounds_both(specs, seeds, rules, policy_set=None):
    """(generic rows, return), (specialised rows, return) for the same seeds; the specialised
    loop is ``policy_set``'s (by default the set of ``specs``) with ``specs`` seated."""
    codes = parse_rules(rules).codes()
    seeds = np.asarray(seeds, dtype=np.int64)
    pols = [s.policy for s in specs]
    a = np.zeros((len(seeds), loop.ROUND_COLS), dtype=np.int64)
    b = a.copy()
    ra = loop.play_rounds(seeds, len(pols), codes, _pad(pols), a)
    rb = loop.rounds_loop(seeds, len(pols), codes, (policy_set or _set(specs)).seat(pols), b)
    return (a, ra), (b, rb)


@pytest.mark.parametrize("rules", RULES)
@pytest.mark.parametrize("players", [2, 3, 4])
def test_greedy_self_play_same_rows_in_all_three_loops(rules, players):
    (a, ra), (b, rb) = _rounds_both([GREEDY] * players, np.arange(3000) + 7 * players, rules)
    assert ra == rb == -1 and np.array_equal(a, b)
    c = np.zeros_like(a)
    assert inline_greedy.play_greedy_rounds(np.arange(3000, dtype=np.int64) + 7 * players, players,
                                            parse_rules(rules).codes(), c) == -1
    assert np.array_equal(a, c)


@pytest.mark.parametrize("rules", RULES)
@pytest.mark.parametrize("players", [2, 3, 4])
def test_mixed_policies_every_seating_same_rows(rules, players):
    """Three seatings of ``players`` different policies: one compiled loop serves them all."""
    rng = np.random.default_rng(players)
    for _ in range(3):
        specs = [MIXED[i] for i in rng.permutation(players)]
        assert _set(specs) is _set(MIXED[:players])
        (a, ra), (b, rb) = _rounds_both(specs, rng.integers(0, 2**62, 1500), rules)
        assert ra == rb == -1 and np.array_equal(a, b)


@pytest.mark.parametrize("name", sorted(n for n, s in registry.builtin_agents().items()
                                        if s.compiled and n not in ("sampler", "planner", "net", "search-net")))
def test_every_trusted_agent_plays_the_same_rows_compiled_in(name):
    """Every compiled agent kc-sim ships, trusted (not checked, its memory prepared as it
    declares), plays the generic loop's rows, alone and against another: a counterfactual
    against its base, the others against random. One compiled loop (the set of the two)
    serves the three tables, the loop the counterfactual experiments play: a loop is
    compiled per set, the suite's costliest step when numba's cache is cold."""
    spec = load_agent(name)
    assert registry.trusted(spec)
    other = load_agent(COUNTERFACTUALS[name][0]) if name in COUNTERFACTUALS else RANDOM
    one_loop = _set([spec, other])
    for specs in ([spec] * 3, [spec, other], [other, spec, other]):
        (a, ra), (b, rb) = _rounds_both(specs, np.arange(800) * 5 + 1, "draw=if_stuck,must_play_kings=true", one_loop)
        assert ra == rb == -1 and np.array_equal(a, b)


def test_search_agents_play_the_same_rows_compiled_in():
    for name in ("planner", "sampler:2", "search-net:2"):
        spec = load_agent(name)
        assert registry.trusted(spec)
        if policy_ref(spec.policy) is None:            # sampler:N is a closure: the generic loop
            assert runner.loop_name([spec, GREEDY]) == "generic loop"
            continue
        (a, ra), (b, rb) = _rounds_both([spec, GREEDY], np.arange(60), "classic")
        assert ra == rb == -1 and np.array_equal(a, b)


def test_one_loop_per_set_of_policies():
    ps = _set([GREEDY, MERGER, GREEDY])
    assert _set([MERGER, GREEDY]) is ps
    assert ps.seat([MERGER.policy, GREEDY.policy, MERGER.policy]).slots[:3] == (1, 0, 1)
    assert [e.ref for e in ps.entries] == ["agents.greedy:greedy_policy", "agents.merger:merger_policy"]
    assert all(e.trusted and e.mem_words == 0 for e in ps.entries)
    assert _set([GREEDY]) is not ps
    assert ps.numba_type == PolicySetType(ps.entries) and hash(ps.numba_type) == hash(PolicySetType(ps.entries))


_SECOND_PROCESS = LISTENER + r"""
import numpy as np
from kc_sim.play.driver import runner
rows = runner.play_rounds(["greedy", "merger"], np.arange(50), "classic")
event.register("numba:compile", Listener())
rows = runner.play_rounds(["merger", "greedy", "merger"], np.arange(50), "classic")
print(json.dumps({"compiled": compiled, "loop": runner.loop_name(["greedy", "merger"])}))
"""


def test_a_compiled_set_is_loaded_from_the_cache_in_another_process():
    """The loop compiled for a set is numba's cache entry for that set's type: a second
    process (after a first has filled the cache) loads it for any seating of the same set,
    compiling nothing; nothing but numba's own cache decides this."""
    for _ in range(2):
        out = subprocess.run([sys.executable, "-c", _SECOND_PROCESS], capture_output=True, text=True,
                             check=True, timeout=600, env=dict(os.environ))
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got == {"compiled": [], "loop": "specialised loop"}


@pytest.mark.parametrize("match", ["to_25", "eliminate_25", "rounds:3"])
@pytest.mark.parametrize("players", [2, 3, 4])
def test_matches_same_rows(match, players):
    rules = parse_rules(f"classic,match={match}")
    codes = rules.codes()
    specs = list(MIXED[:players])
    pols = [s.policy for s in specs]
    seeds = np.arange(150, dtype=np.int64) * 3 + players
    bound = runner.max_match_rounds(rules, players)
    out = []
    for play, arg in ((loop.play_matches, _pad(pols)), (loop.matches_loop, _set(specs).seat(pols))):
        rr = np.zeros((len(seeds) * bound, loop.ROUND_COLS), dtype=np.int64)
        mm = np.zeros((len(seeds), loop.MATCH_COLS), dtype=np.int64)
        n = play(seeds, players, codes, int(rules.match_code), rules.match_rounds, arg, rr, mm, 100)
        out.append((n, rr[:max(n, 0)], mm))
    assert out[0][0] > 0 and out[0][0] == out[1][0]
    assert np.array_equal(out[0][1], out[1][1]) and np.array_equal(out[0][2], out[1][2])


@pytest.mark.parametrize("players", [2, 4])
def test_an_illegal_action_stops_both_loops_at_the_same_round(players):
    specs = [FLAKY] + [GREEDY] * (players - 1)
    assert not registry.trusted(FLAKY) and not _set(specs).trusted
    (a, ra), (b, rb) = _rounds_both(specs, np.arange(2000), "classic")
    assert ra >= 0 and ra == rb
    assert a[ra, loop.C_STATUS] == loop.STATUS_ILLEGAL and a[ra, loop.C_BAD_SEAT] == 0
    assert np.array_equal(a[:ra + 1], b[:rb + 1])


def test_a_raising_policy_raises_the_same_in_both_loops():
    specs = [GREEDY, FLAKY, GREEDY]
    pols = [s.policy for s in specs]
    errors = []
    codes = parse_rules("classic").codes()
    seeds = np.arange(2000, dtype=np.int64)
    for play, arg in ((loop.play_rounds, _pad(pols)), (loop.rounds_loop, _set(specs).seat(pols))):
        with pytest.raises(ValueError) as e:
            play(seeds, 3, codes, arg, np.zeros((len(seeds), loop.ROUND_COLS), dtype=np.int64))
        errors.append(str(e.value))
    assert errors == ["planned failure"] * 2


def _wrap(fn):
    """``fn`` called from a closure: a policy not found again by name (the generic loop)."""
    inner = nb.njit(fn)

    def wrapped(st, seat, mem):
        return inner(st, seat, mem)
    return wrapped


@pytest.mark.parametrize("players", [2, 3])
def test_runner_faults_are_the_same_with_either_loop(tmp_path, players):
    flaky_closure = AgentSpec("flaky", "", policy=compiled_policy(_wrap(flaky.py_func)))
    faults = []
    for spec, kind in ((FLAKY, "specialised loop"), (flaky_closure, "generic loop")):
        agents = [spec] + [GREEDY] * (players - 1)
        assert runner.loop_name(agents) == kind
        with pytest.raises(runner.AgentFault) as e:
            runner.play_rounds(agents, np.arange(2000), "classic", fault_dir=tmp_path / kind)
        with pytest.raises(runner.AgentFault) as m:
            runner.play_matches(agents, np.arange(300), "classic,match=eliminate_25", fault_dir=tmp_path / kind)
        faults.append((str(e.value).replace(kind, "X"), str(m.value).replace(kind, "X"), e.value.round, m.value.match))
    assert faults[0] == faults[1]


def test_runner_results_are_the_generic_loops():
    agents = ["greedy", "random", "merger"]
    assert runner.loop_name(agents) == "specialised loop"
    specs = registry.load_agents(agents)
    rows = runner.play_rounds(agents, np.arange(500), "draw_first")
    codes = parse_rules("draw_first").codes()
    out = np.zeros_like(rows)
    loop.play_rounds(np.arange(500, dtype=np.int64), 3, codes, runner.policies_tuple(specs), out)
    assert np.array_equal(rows, out)
    # a run's loop compiled for more agents than seated plays the same rounds
    wide = runner.play_rounds(agents, np.arange(500), "draw_first", loop_agents=agents + ["king-first"])
    assert np.array_equal(rows, wide)


def test_a_user_policy_is_checked_and_gets_all_its_memory():
    """A policy kc-sim does not ship is not trusted, whatever its spec declares: the loop
    checks its actions and prepares its whole memory."""
    spec = load_agent("agents.examples.my_compiled_agent:low_first")
    assert not registry.trusted(spec) and not registry.trusted(FLAKY)
    ps = _set([spec, GREEDY])
    mine = next(e for e in ps.entries if not e.trusted)
    assert mine.mem_words == MEM_SIZE and not ps.trusted


def test_policies_not_found_by_name_use_the_generic_loop():
    local = compiled_policy(lambda st, seat, mem: STOP)
    assert policy_ref(local) is None                    # not reachable by module and name
    assert runner.policy_set([GREEDY, AgentSpec("local", "", policy=local)]) is None
    assert runner.loop_name([GREEDY, load_agent("sampler:2")]) == "generic loop"
    assert runner.loop_name([GREEDY, load_agent("planner")]) == "specialised loop"
    assert policy_ref(GREEDY.policy)[0] == "agents.greedy:greedy_policy"
    with pytest.raises(ValueError):
        PolicySet([(local, False, MEM_SIZE)])
