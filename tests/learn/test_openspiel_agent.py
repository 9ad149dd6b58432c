"""OpenSpiel's IS-MCTS as a kc-sim agent: names, legal and reproducible play, the
compiled rollouts, and a real tournament through the CLI with worker processes."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("pyspiel")

import pandas as pd  # noqa: E402

from kc_sim.core import layout as L  # noqa: E402
from kc_sim.errors import UserError  # noqa: E402
from kc_sim.learn import openspiel_agent as oa  # noqa: E402
from kc_sim.play.table.game import Game  # noqa: E402
from kc_sim.play.agents.registry import load_agent  # noqa: E402

KC_SIM = str(Path(sys.executable).with_name("kc-sim"))


def test_names():
    spec = load_agent("openspiel:ismcts")
    assert spec.name == "openspiel:ismcts:100" and spec.source == "openspiel:ismcts"
    assert spec.factory().simulations == oa.DEFAULT_SIMULATIONS == 100
    spec = load_agent("openspiel:ismcts:7")
    assert spec.name == spec.source == "openspiel:ismcts:7" and not spec.compiled
    assert spec.factory().simulations == 7
    for bad in ("openspiel:mcts", "openspiel:ismcts:0", "openspiel:ismcts:x"):
        with pytest.raises(UserError) as e:
            load_agent(bad)
        assert "\n" not in str(e.value) and "openspiel:ismcts:N" in str(e.value)


def _play(players, rules, seed, sims=8):
    """One round: seat 0 IS-MCTS, the others its first legal action; the actions taken."""
    g = Game(players, rules, seed)
    agent = load_agent(f"openspiel:ismcts:{sims}").factory()
    agent.start_round(0, players, g.rules, seed)
    actions = []
    while not g.over:
        obs = g.observe()
        a = agent.act(obs) if g.seat == 0 else obs.legal[0]
        assert a in obs.legal
        actions.append(a)
        g.play(a)
    return actions


@pytest.mark.parametrize("players,rules", [(2, "classic"), (3, "draw_first"),
                                           (2, "draw=if_stuck,must_play_kings=true,scoring=face")])
def test_plays_legal_and_reproducible(players, rules):
    first = _play(players, rules, 11)
    assert first == _play(players, rules, 11)


def test_rollouts_end_rounds_and_score_them():
    g = Game(3, "classic", 5)
    mem = np.zeros((L.MAX_SEATS, 64), dtype=np.int64)
    totals = np.zeros(3, dtype=np.int64)
    oa.random_rollouts(g.state, 10, 1, mem, totals)
    assert (totals <= 0).all() and totals.sum() < 0
    assert not g.over                                     # the state itself is not played
    again = np.zeros(3, dtype=np.int64)
    oa.random_rollouts(g.state, 10, 1, mem, again)
    assert (again == totals).all()


def _cli(*args, cwd):
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    return subprocess.run([KC_SIM, *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=600)


def test_tournament_with_worker_processes(tmp_path):
    out2, out1 = tmp_path / "j2", tmp_path / "j1"
    common = ["tournament", "--agents", "openspiel:ismcts:10,greedy", "--players", "2", "--rounds", "8",
              "--chunk-size", "4", "--seed", "3", "-q"]
    r = _cli(*common, "--jobs", "2", "--out", str(out2), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    summary = pd.read_parquet(out2 / "summary.parquet")
    row = summary[(summary.agent == "openspiel:ismcts:10") & (summary.opponent == "greedy")].iloc[0]
    assert row.rounds == 8 and 0 <= row.win_lo <= row.win_rate <= row.win_hi <= 1
    rounds = pd.read_parquet(out2 / "rounds")
    assert sorted(rounds.chunk.unique()) == [0, 1] and len(rounds) == 8
    assert set(rounds.agent_0) | set(rounds.agent_1) == {"openspiel:ismcts:10", "greedy"}
    # the same run in this one process plays the very same rounds
    r = _cli(*common, "--jobs", "1", "--out", str(out1), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    key = ["seed", "seating"]
    a = rounds.sort_values(key).reset_index(drop=True)
    b = pd.read_parquet(out1 / "rounds").sort_values(key).reset_index(drop=True)
    cols = ["seed", "seating", "agent_0", "agent_1", "penalty_0", "penalty_1", "winner", "actions"]
    pd.testing.assert_frame_equal(a[cols], b[cols])


def test_unknown_openspiel_name_is_one_line_exit_2(tmp_path):
    r = _cli("tournament", "--agents", "openspiel:alphazero,greedy", "--players", "2", "--rounds", "2",
             "--out", str(tmp_path / "x"), cwd=tmp_path)
    assert r.returncode == 2
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and "openspiel:alphazero" in lines[0] and "openspiel:ismcts" in lines[0]
    assert "Traceback" not in r.stderr
