"""The built-in agents: each one's distinctive behaviour in hand-built positions, no illegal
move in many seeded rounds under every variant, the Python twin of greedy, and loading
agents by name."""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import pytest

from agents.greedy import PythonGreedy, greedy_policy
from agents.king_first import king_first_policy
from agents.merger import merger_policy
from kc_sim.core import loop
from kc_sim.core.layout import STOP
from kc_sim.core.legal import count_plays, nth_play
from kc_sim.core.policy import MEM_SIZE, random_policy
from kc_sim.core.rng import derive
from kc_sim.errors import UserError
from kc_sim.game.rules import parse_rules
from kc_sim.play.agents.interface import AgentSpec, PythonAgent
from kc_sim.play.table.game import Game
from kc_sim.play.agents.registry import builtin_agents, builtin_names, load_agent
from kc_sim.play.driver.runner import play_matches, play_rounds, policies_tuple
from kc_sim.play.recording.recorded import record_round
from kc_sim.testing import round_rule_sets
from tests.helpers.positions import play_turn, position

ROOT = Path(__file__).resolve().parents[2]
PY_EXAMPLE = ROOT / "agents" / "examples" / "my_python_agent.py"
COMPILED_EXAMPLE = ROOT / "agents" / "examples" / "my_compiled_agent.py"
BUILTINS = ["random", "greedy", "king-first", "pile-merger", "greedy-hold-kings", "greedy-kings-last",
            "greedy-kings-sides", "greedy-low-sides", "greedy-no-merge", "merger-low-sides", "merger-no-merge",
            "net", "planner", "sampler", "search-net"]
POLICIES = {"greedy": greedy_policy, "king-first": king_first_policy, "pile-merger": merger_policy}


# --- distinctive behaviour -------------------------------------------------------------------

def test_greedy_sheds_highest_rank_first_worked_example_6():
    # docs/rules.md, Worked examples, 6: 10S 4H 6C JD on the sides; hand 9H 3C KC: three cards in one turn
    g = position(["9H", "3C", "KC"], [["TS"], ["4H"], ["6C"], ["JD"]])
    assert play_turn(greedy_policy, g) == ["KC>NE", "9H>N", "3C>E"]
    assert g.over and g.winner == 1


def test_greedy_prefers_a_pile_to_an_empty_side_and_builds_on_its_own_cards():
    # QD fits on KS (N) and could also go on the empty side W: it goes on the pile;
    # then JC on QD, then the 5H (fits nothing) on the empty side W; stuck with 2S, it moves
    # the king pile to a corner, which frees N for the 2S: out
    g = position(["5H", "JC", "QD", "2S"], [["KS"], ["9C"], ["8H"], []])
    assert play_turn(greedy_policy, g) == ["QD>N", "JC>N", "5H>W", "N>NE", "2S>N"]
    assert g.winner == 1


def test_greedy_moves_a_pile_only_to_place_a_card_now():
    # worked example 2: N 8C 7H moves onto E 9D; the freed side takes 4S, then 3H goes on 4S
    g = position(["4S", "3H", "AD"], [["8C", "7H"], ["9D"], ["JC"], ["2H"]])
    assert play_turn(greedy_policy, g) == ["N>E", "4S>N", "3H>N"]
    # with a card to place, it places before moving: 4S goes on 5D first; stuck, it merges
    # N onto E for QH, then S (JC) onto that QH to free S for its last card
    g = position(["4S", "QH", "2C"], [["8C", "7H"], ["9D"], ["JC"], ["5D"]])
    assert play_turn(greedy_policy, g) == ["4S>W", "N>E", "QH>N", "S>N", "2C>S"]


def test_greedy_never_moves_when_the_freed_side_could_take_nothing():
    # two decks, four kings in the corners, king_on_empty_side=false, a hand of kings only:
    # N>E is legal but the freed side would take no card of the hand: greedy stops
    rules = "decks=2,king_on_empty_side=false"
    g = Game.from_position([["2C"], ["KC", "KD"]], [["8C", "7H"], ["9D"], ["JC"], ["2H"], ["KC"], ["KD"], ["KH"],
                                                   ["KS"]], ["3D"], dealer=0, rules=rules)
    assert "N>E" in g.legal_texts()
    assert play_turn(greedy_policy, g) == []
    # pile-merger makes that move anyway
    g = Game.from_position([["2C"], ["KC", "KD"]], [["8C", "7H"], ["9D"], ["JC"], ["2H"], ["KC"], ["KD"], ["KH"],
                                                   ["KS"]], ["3D"], dealer=0, rules=rules)
    assert play_turn(merger_policy, g) == ["N>E"]


def test_king_first_moves_a_side_king_to_a_corner_before_anything_else():
    # N holds a lone KS; hand QD (fits KS) and 5C; E holds 6D (5C fits)
    piles = [["KS"], ["6D"], ["JC"], ["9H"]]
    g = position(["QD", "5C", "2S"], piles)
    assert play_turn(greedy_policy, g) == ["QD>N", "5C>E", "N>NE", "2S>N"]
    g = position(["QD", "5C", "2S"], piles)
    assert play_turn(king_first_policy, g) == ["N>NE", "QD>NE", "5C>E", "2S>N"]


def test_king_first_puts_hand_kings_in_corners_first():
    g = position(["KH", "KC", "QD", "3S"], [["4H"], ["9C"], ["8H"], ["7S"]])
    assert play_turn(king_first_policy, g) == ["KC>NE", "KH>SE", "QD>NE", "3S>N"]


def test_merger_moves_first_then_fills_the_freed_side_with_its_highest_card():
    # greedy places 4S on 5D first and moves only when stuck; the merger moves N onto E
    # first, puts its highest card (QH) on the freed side, merges S (JC) onto it, fills S
    # with 4S rather than putting 4S on 5D, then merges S onto W
    piles = [["8C", "7H"], ["9D"], ["JC"], ["5D"]]
    g = position(["4S", "QH", "2C"], piles)
    assert play_turn(merger_policy, g) == ["N>E", "QH>N", "S>N", "4S>S", "S>W", "2C>S"]
    g = position(["4S", "QH", "2C"], piles)
    assert play_turn(greedy_policy, g) == ["4S>W", "N>E", "QH>N", "S>N", "2C>S"]


def test_merger_fills_sides_with_non_kings_while_a_corner_is_empty():
    g = position(["KD", "9S", "3C"], [["8C"], ["9D"], ["JC"], ["5D"]])
    # N>E merges, N takes 9S (not the king: a corner is empty), then the king goes to a corner
    assert play_turn(merger_policy, g) == ["N>E", "9S>N", "KD>NE"]
    g = position(["KD", "9S", "3C"], [["8C"], ["9D"], ["JC"], ["5D"]])
    assert play_turn(greedy_policy, g) == ["KD>NE", "N>E", "9S>N"]


def test_random_is_uniform_over_plays_and_stops_only_when_none_is_left():
    g = position(["4S", "QH", "2C"], [["8C", "7H"], ["9D"], ["JC"], ["5D"]])
    k = count_plays(g.state)
    plays = {int(nth_play(g.state, i)) for i in range(k)}
    mem = np.zeros(MEM_SIZE, dtype=np.int64)
    seen = {}
    for s in range(2000):
        mem[0] = derive(s, 1)
        a = int(random_policy(g.state, g.seat, mem))
        seen[a] = seen.get(a, 0) + 1
    assert set(seen) == plays and STOP not in seen
    assert min(seen.values()) > 2000 / k * 0.7
    stuck = position(["2C"], [["8H"], ["9D"], ["JC"], ["5D"]] + [["KS"], ["KH"], ["KD"], ["KC"]])
    assert count_plays(stuck.state) == 0
    assert random_policy(stuck.state, stuck.seat, mem) == STOP


def test_builtins_are_deterministic_and_never_touch_their_generator():
    g = Game(4, "classic", 3)
    for pol in POLICIES.values():
        mem = np.zeros(MEM_SIZE, dtype=np.int64)
        mem[0] = 12345
        a = pol(g.state, g.seat, mem)
        assert pol(g.state, g.seat, mem) == a and mem[0] == 12345 and not mem[1:].any()


# --- no illegal move, every variant ----------------------------------------------------------

ALL_RULES = round_rule_sets()


#: rounds per agent and rule set (else 500: 48,000 rounds an agent over the 96 rule sets): the
#: searching agents are slower than the baselines
ROUNDS_PER_VARIANT = {"planner": 100, "sampler": 4, "net": 200, "search-net": 1}
#: rounds at a mixed table with a searching agent (the fewest of its agents), else 200
MIXED_ROUNDS = {"sampler": 10, "search-net": 3}


def _generic_rounds(specs, seeds, rules):
    """Rounds in the generic compiled loop (policies through function pointers: one compile
    serves every table; tests/core/test_policy_set.py checks that the loops compiled for a set
    of policies write the same rows), each action checked for legality."""
    seeds = np.asarray(seeds, dtype=np.int64)
    out = np.zeros((len(seeds), loop.ROUND_COLS), dtype=np.int64)
    pols = policies_tuple(specs)
    loop.play_rounds(seeds, len(specs), rules.codes(), pols, out)
    return out


def test_no_illegal_move_in_many_rounds_of_every_agent_under_every_variant():
    specs = [load_agent(n) for n in BUILTINS]
    for i, rs in enumerate(ALL_RULES):
        for j, spec in enumerate(specs):
            players = 2 + (i + j) % (rs.max_players - 1)
            n = ROUNDS_PER_VARIANT.get(spec.name, 500)
            rows = _generic_rounds([spec] * players, np.arange(n) + 1000 * i, rs)
            assert (rows[:, loop.C_STATUS] == loop.STATUS_OK).all()
            assert np.isin(rows[:, loop.C_END], [1, 2]).all()
        # every agent at mixed tables
        mixed = [specs[(i + s) % len(specs)] for s in range(rs.max_players)]
        rows = _generic_rounds(mixed, np.arange(min(MIXED_ROUNDS.get(m.name, 200) for m in mixed)), rs)
        assert (rows[:, loop.C_STATUS] == loop.STATUS_OK).all()
    for match in ("to_25", "rounds:3", "eliminate_25"):
        rounds, matches = play_matches(specs[1:5], np.arange(100), parse_rules(f"classic,match={match}"))
        assert (rounds[:, loop.C_STATUS] == loop.STATUS_OK).all() and matches[:, loop.M_WINNERS].all()


def test_agent_rounds_replay_cleanly_in_the_reference_engine():
    from kc_sim.play.recording.recorded import record_compiled_round
    from kc_sim.play.driver.runner import policies_tuple
    from kc_sim.records import check

    n = 0
    for i, rs in enumerate(ALL_RULES[::8]):
        for j, name in enumerate(BUILTINS):
            players = 2 + (i + j) % (rs.max_players - 1)
            pols = policies_tuple([load_agent(name)] * players)
            for seed in range(16):
                seed = 7919 * i + 31 * j + seed
                rec, status, _ = record_compiled_round(pols, [name] * players, seed, seed % players, rs)
                assert status == 0
                assert check.check_record(rec) == [], (rs, name, seed)
                n += 1
    assert n >= 300


# --- the Python twin of greedy -----------------------------------------------------------------

@pytest.mark.parametrize("rules,players", [("classic", 4), ("draw_first", 3), ("classic,draw=if_stuck", 2),
                                           ("decks=2,must_play_kings=true,king_on_empty_side=false", 6)])
def test_python_greedy_plays_the_same_rounds_as_compiled_greedy(rules, players):
    twin = AgentSpec("greedy", "twin", factory=PythonGreedy)
    seeds = np.arange(300) + 77
    compiled = play_rounds([load_agent("greedy")] * players, seeds, rules)
    python = play_rounds([twin] * players, seeds, rules)
    assert (compiled == python).all()
    # and turn by turn, in a mixed game
    for seed in (1, 2, 3):
        a = record_round([load_agent("greedy"), twin] * (players // 2), seed, rules)
        b = record_round([twin, load_agent("greedy")] * (players // 2), seed, rules)
        assert a["turns"] == b["turns"] and a["result"] == b["result"]


# --- loading by name -----------------------------------------------------------------------------

def test_builtin_names_and_alias():
    assert builtin_names() == BUILTINS
    known = builtin_agents()
    assert known["merger"] is known["pile-merger"]
    assert load_agent("merger").name == "pile-merger"
    assert load_agent("King_First").name == "king-first"
    for name in BUILTINS:
        spec = load_agent(name)
        assert spec.compiled and spec.policy.__doc__
        assert pickle.loads(pickle.dumps(spec)) is spec


def test_unknown_name_lists_known_names_and_the_closest_match():
    with pytest.raises(UserError) as e:
        load_agent("gredy")
    msg = str(e.value)
    assert "'greedy'" in msg and "random" in msg and "king-first" in msg and "pile-merger" in msg
    assert "\n" not in msg
    with pytest.raises(UserError, match="did you mean 'king-first'"):
        load_agent("kingfirst")


def test_load_from_module_and_file_path_and_play():
    by_module = load_agent("agents.examples.my_compiled_agent:low_first")
    assert by_module.compiled and by_module.name == "agents.examples.my_compiled_agent:low_first"
    by_file = load_agent(f"{PY_EXAMPLE}:CautiousShedder")
    assert not by_file.compiled and issubclass(by_file.factory, PythonAgent)
    rows = play_rounds([by_file, by_module, "greedy"], np.arange(40), "classic")
    assert (rows[:, loop.C_STATUS] == 0).all()
    compiled_by_file = load_agent(f"{COMPILED_EXAMPLE}:low_first")
    rows = play_rounds([compiled_by_file, "merger"], np.arange(1000), "classic")
    assert (rows[:, loop.C_STATUS] == 0).all()
    # a relative path works too, and a spec pickles as its name
    rel = load_agent("agents/examples/my_python_agent.py:CautiousShedder") if Path("agents").is_dir() else by_file
    assert pickle.loads(pickle.dumps(rel)).factory is rel.factory


def test_user_file_agent_from_tmp_path(tmp_path):
    (tmp_path / "mine.py").write_text(
        "from kc_sim.play.agents.interface import PythonAgent\n"
        "from kc_sim.core.policy import compiled_policy\n"
        "from kc_sim.core.layout import STOP\n"
        "import numba as nb\n"
        "class Stopper(PythonAgent):\n"
        "    def act(self, obs):\n"
        "        return 'stop' if 448 in obs.legal else obs.legal[0]\n"
        "@nb.njit\n"
        "def lazy(st, seat, mem):\n"
        "    return STOP\n"
        "not_an_agent = 3\n"
    )
    rows = play_rounds([f"{tmp_path}/mine.py:Stopper", f"{tmp_path}/mine.py:lazy"], np.arange(20), "classic")
    assert (rows[:, loop.C_END] == 2).all()          # nobody ever plays: every round is blocked
    with pytest.raises(UserError, match="has no 'Stoper'.*did you mean 'Stopper'"):
        load_agent(f"{tmp_path}/mine.py:Stoper")
    with pytest.raises(UserError, match="expected a compiled policy"):
        load_agent(f"{tmp_path}/mine.py:not_an_agent")
    with pytest.raises(UserError, match="no such file"):
        load_agent(f"{tmp_path}/nope.py:X")
    with pytest.raises(UserError, match="cannot import module"):
        load_agent("no_such_package.mod:X")
