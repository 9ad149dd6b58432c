"""The specialised round loops (kc_sim.core.specialise) and the hand-inlined reference loop
(kc_sim.core.inline_greedy) play exactly the rounds of the generic loop (kc_sim.core.loop):
same rows for the same seeds, every player count and several rule sets, in rounds and in
matches, and the same faults (an illegal action stops the run at the same round with the
same row; a policy that raises raises the same), also through the runner's AgentFault."""

from __future__ import annotations

import numpy as np
import pytest

from kc_sim.core import inline_greedy, layout, loop, specialise
from kc_sim.core.bits import lowest
from kc_sim.core.layout import HAND, PLAYERS, STOP, TURNS
from kc_sim.core.legal import count_plays, nth_play
from kc_sim.core.policy import compiled_policy, random_policy
from kc_sim.core.rng import below
from kc_sim.game.cards import ALL_MASK
from kc_sim.game.rules import parse_rules
from kc_sim.play import runner
from kc_sim.play.agent import AgentSpec
from kc_sim.play.registry import load_agent

GREEDY, RANDOM, KING, MERGER = (load_agent(n).policy for n in ("greedy", "random", "king-first", "merger"))
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


def _pad(pols):
    return tuple(pols) + (random_policy,) * (layout.MAX_SEATS - len(pols))


def _rounds_both(pols, seeds, rules):
    """(generic rows, return), (specialised rows, return) for the same seeds."""
    codes = parse_rules(rules).codes()
    seeds = np.asarray(seeds, dtype=np.int64)
    sp = specialise.specialised(pols)
    a = np.zeros((len(seeds), loop.ROUND_COLS), dtype=np.int64)
    b = a.copy()
    ra = loop.play_rounds(seeds, len(pols), codes, _pad(pols), a)
    rb = sp.load("rounds")(seeds, len(pols), codes, sp.slots(pols), b)
    return (a, ra), (b, rb)


@pytest.mark.parametrize("rules", RULES)
@pytest.mark.parametrize("players", [2, 3, 4])
def test_greedy_self_play_same_rows_in_all_three_loops(rules, players):
    pols = [GREEDY] * players
    (a, ra), (b, rb) = _rounds_both(pols, np.arange(3000) + 7 * players, rules)
    assert ra == rb == -1 and np.array_equal(a, b)
    c = np.zeros_like(a)
    assert inline_greedy.play_greedy_rounds(np.arange(3000, dtype=np.int64) + 7 * players, players,
                                            parse_rules(rules).codes(), c) == -1
    assert np.array_equal(a, c)


@pytest.mark.parametrize("rules", RULES)
@pytest.mark.parametrize("players", [2, 3, 4])
def test_mixed_policies_every_seating_same_rows(rules, players):
    """Three seatings of ``players`` different policies: one specialised loop serves them all."""
    rng = np.random.default_rng(players)
    for _ in range(3):
        pols = [MIXED[i] for i in rng.permutation(players)]
        assert specialise.specialised(pols) is specialise.specialised(MIXED[:players])
        (a, ra), (b, rb) = _rounds_both(pols, rng.integers(0, 2**62, 1500), rules)
        assert ra == rb == -1 and np.array_equal(a, b)


def test_one_loop_per_set_of_policies():
    sp = specialise.specialised([GREEDY, MERGER, GREEDY])
    assert specialise.specialised([MERGER, GREEDY]) is sp
    assert list(sp.slots([MERGER, GREEDY, MERGER])[:3]) == [1, 0, 1]
    assert sp.names == ["agents.greedy:greedy_policy", "agents.merger:merger_policy"]
    assert specialise.specialised([GREEDY]) is not sp
    sp.load("rounds")
    assert sp.ready("rounds") and sp.on_disk("rounds") and sp.path.exists()


@pytest.mark.parametrize("match", ["to_25", "eliminate_25", "rounds:3"])
@pytest.mark.parametrize("players", [2, 3, 4])
def test_matches_same_rows(match, players):
    rules = parse_rules(f"classic,match={match}")
    codes = rules.codes()
    pols = list(MIXED[:players])
    sp = specialise.specialised(pols)
    seeds = np.arange(150, dtype=np.int64) * 3 + players
    bound = runner.max_match_rounds(rules, players)
    out = []
    for play, arg in ((loop.play_matches, _pad(pols)), (sp.load("matches"), sp.slots(pols))):
        rr = np.zeros((len(seeds) * bound, loop.ROUND_COLS), dtype=np.int64)
        mm = np.zeros((len(seeds), loop.MATCH_COLS), dtype=np.int64)
        n = play(seeds, players, codes, int(rules.match_code), rules.match_rounds, arg, rr, mm, 100)
        out.append((n, rr[:max(n, 0)], mm))
    assert out[0][0] > 0 and out[0][0] == out[1][0]
    assert np.array_equal(out[0][1], out[1][1]) and np.array_equal(out[0][2], out[1][2])


@pytest.mark.parametrize("players", [2, 4])
def test_an_illegal_action_stops_both_loops_at_the_same_round(players):
    pols = [flaky] + [GREEDY] * (players - 1)
    (a, ra), (b, rb) = _rounds_both(pols, np.arange(2000), "classic")
    assert ra >= 0 and ra == rb
    assert a[ra, loop.C_STATUS] == loop.STATUS_ILLEGAL and a[ra, loop.C_BAD_SEAT] == 0
    assert np.array_equal(a[:ra + 1], b[:rb + 1])


def test_a_raising_policy_raises_the_same_in_both_loops():
    pols = [GREEDY, flaky, GREEDY]
    errors = []
    codes = parse_rules("classic").codes()
    seeds = np.arange(2000, dtype=np.int64)
    sp = specialise.specialised(pols)
    for play, arg in ((loop.play_rounds, _pad(pols)), (sp.load("rounds"), sp.slots(pols))):
        with pytest.raises(ValueError) as e:
            play(seeds, 3, codes, arg, np.zeros((len(seeds), loop.ROUND_COLS), dtype=np.int64))
        errors.append(str(e.value))
    assert errors == ["planned failure"] * 2


@pytest.mark.parametrize("players", [2, 3])
def test_runner_faults_are_the_same_with_either_loop(tmp_path, monkeypatch, players):
    agents = [AgentSpec("flaky", "", policy=flaky)] + [load_agent("greedy")] * (players - 1)
    faults = []
    for mode in ("never", "always"):
        monkeypatch.setattr(runner, "SPECIALISE", mode)
        with pytest.raises(runner.AgentFault) as e:
            runner.play_rounds(agents, np.arange(2000), "classic", fault_dir=tmp_path / mode)
        with pytest.raises(runner.AgentFault) as m:
            runner.play_matches(agents, np.arange(300), "classic,match=eliminate_25", fault_dir=tmp_path / mode)
        faults.append((str(e.value).replace(mode, "X"), str(m.value).replace(mode, "X"), e.value.round, m.value.match))
    assert faults[0] == faults[1]


def test_runner_results_do_not_depend_on_the_loop(monkeypatch):
    agents = ["greedy", "random", "merger"]
    got = []
    for mode in ("never", "always", "auto"):
        monkeypatch.setattr(runner, "SPECIALISE", mode)
        rows = runner.play_rounds(agents, np.arange(500), "draw_first")
        rr, mm = runner.play_matches(agents, np.arange(40), "classic,match=to_25")
        got.append((rows, rr, mm))
    for other in got[1:]:
        assert all(np.array_equal(x, y) for x, y in zip(got[0], other))


def test_auto_compiles_only_when_it_pays(monkeypatch):
    """A small call on a set never compiled stays on the generic loop; once the generic loop has
    spent COMPILE_AFTER_S on the set (cheap policies), the next call compiles and uses it."""
    agents = ["random", "greedy"]
    sp = specialise.specialised([RANDOM, GREEDY])
    monkeypatch.setattr(runner, "SPECIALISE", "auto")
    monkeypatch.setattr(sp, "on_disk", lambda mode: False)
    monkeypatch.setattr(sp, "ready", lambda mode: False)
    loads = []
    monkeypatch.setattr(sp, "load", lambda mode: loads.append(mode) or specialise.Specialised.load(sp, mode))
    monkeypatch.setattr(runner, "COMPILE_AFTER_S", 1e9)
    before = runner._use(sp).rounds
    runner.play_rounds(agents, np.arange(50), "classic")
    assert loads == [] and runner._played[sp].rounds == before + 50
    monkeypatch.setattr(runner, "COMPILE_AFTER_S", 0.0)
    monkeypatch.setattr(runner, "CHEAP_NS", 1e12)
    runner.play_rounds(agents, np.arange(50), "classic")
    assert loads == ["rounds"] and runner._played[sp].rounds == before + 50


def test_the_generic_loop_time_counts_over_processes(tmp_path):
    """Each process appends its generic-loop CPU time on a set to the set's file, so the
    compile threshold is reached by a series of runs as by one long run."""
    import subprocess
    import sys

    path = tmp_path / "loops_x.py"
    code = ("import sys, types, numpy as np; from kc_sim.play import runner; "
            "rows = runner.play_rounds(['greedy', 'greedy'], np.arange(20), 'classic'); "
            f"u = runner._Use(types.SimpleNamespace(path=__import__('pathlib').Path({str(path)!r}))); "
            "u.add(rows, 1.25); u.add(rows, 0.5)")
    for _ in range(2):                                 # two other processes, one after the other
        subprocess.run([sys.executable, "-c", code], check=True)
    here = runner._Use(type("S", (), {"path": path})())
    assert here.total_cpu() == pytest.approx(2 * 1.25)  # 0.5 s left unsaved in each (under SAVE_EVERY_S)
    rows = runner.play_rounds(["greedy", "greedy"], np.arange(20), "classic")
    here.add(rows, 0.25)
    assert here.total_cpu() == pytest.approx(2.75) and here.decisions > 0


def test_policies_not_known_at_load_time_use_the_generic_loop():
    import numba as nb

    local = nb.njit(lambda st, seat, mem: STOP)
    assert specialise.policy_name(local) is None          # not reachable by module and name
    assert specialise.specialised([GREEDY, local]) is None
    assert specialise.specialised([GREEDY, load_agent("sampler:2").policy]) is None
    assert specialise.policy_name(GREEDY)[0] == "agents.greedy:greedy_policy"
    assert specialise.inlinable(GREEDY)
    assert not specialise.inlinable(nb.njit(fastmath=True)(flaky.py_func))
