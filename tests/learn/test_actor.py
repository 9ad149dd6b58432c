"""The compiled acting kernel of training (kc_sim.learn.actor): it deals and plays rounds as the
tournament runner does, its network plays what the compiled policy plays, it records what a
teacher chose, and the same generator state records the same decisions; the fixed-deal
evaluation (kc_sim.learn.net_eval) against a recount from the runner's rows."""

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("torch")

from kc_sim.core.layout import MAX_SEATS  # noqa: E402
from kc_sim.core.rows import C_PENALTY, C_WINNER  # noqa: E402
from kc_sim.game.rules import parse_rules  # noqa: E402
from kc_sim.learn import actor  # noqa: E402
from kc_sim.learn.net_eval import deal_seeds, evaluate  # noqa: E402
from kc_sim.net.policy import load_slot, slot_policy  # noqa: E402
from kc_sim.learn.qnet import QNet  # noqa: E402
from kc_sim.play.agents.interface import AgentSpec  # noqa: E402
from kc_sim.play.agents.registry import load_agent  # noqa: E402
from kc_sim.play.driver.runner import play_rounds  # noqa: E402


def _record(players, kinds, learner_seats, pols, P, seeds, temperature=0.0, rng_seed=5):
    bufs = actor.Buffers(len(seeds) * 200 + 2000, len(seeds) * 2000 + 30000, len(seeds) + 2)
    kind = np.zeros(MAX_SEATS, np.int64)
    kind[:players] = kinds
    learner = np.zeros(MAX_SEATS, np.int64)
    learner[list(learner_seats)] = 1
    temp = np.full(MAX_SEATS, temperature)
    rng = np.array([rng_seed], np.int64)
    counts = actor.record(bufs, seeds, players, parse_rules("classic").codes(), tuple(pols), kind, P[None, :],
                          np.zeros(MAX_SEATS, np.int64), learner, temp, np.zeros(MAX_SEATS), None, 0.0, rng)
    return bufs, counts


@pytest.mark.parametrize("players", [2, 4])
def test_the_network_in_the_kernel_plays_what_the_policy_plays(players):
    P = QNet(16, 0, seed=players).to_params()
    spec = AgentSpec("n", "n", policy=slot_policy(load_slot(P)))
    greedy = load_agent("greedy")
    seeds = np.arange(300, dtype=np.int64) + 1000
    bufs, (n, nd, nr) = _record(players, [1] + [0] * (players - 1), [0], [greedy.policy] * MAX_SEATS, P, seeds)
    rows = play_rounds([spec] + [greedy] * (players - 1), seeds, "classic")
    assert n == len(seeds) and nd > 0
    np.testing.assert_array_equal(bufs.penalties[:n, :players], rows[:, C_PENALTY:C_PENALTY + players])
    assert (bufs.n[:nd] >= 2).all() and (bufs.seat[:nd] == 0).all() and (bufs.prob[:nd] == 1).all()


def test_teacher_decisions_are_recorded_and_runs_repeat():
    planner = load_agent("planner").policy
    greedy = load_agent("greedy").policy
    P = QNet(16, 0).to_params()
    seeds = np.arange(200, dtype=np.int64)
    pols = [planner, greedy] + [greedy] * (MAX_SEATS - 2)
    bufs, (n, nd, nr) = _record(2, [0, 0], [0], pols, P, seeds)
    assert nd > 1000 and (bufs.label[:nd] == bufs.chosen[:nd]).all() and (bufs.label[:nd] >= 0).all()
    assert nr == bufs.n[:nd].sum() and (bufs.start[1:nd] == np.cumsum(bufs.n[:nd])[:-1]).all()
    rows = play_rounds(["planner", "greedy"], seeds, "classic")
    np.testing.assert_array_equal(bufs.penalties[:n, :2], rows[:, C_PENALTY:C_PENALTY + 2])
    # sampling with a temperature: the same generator state records the same decisions
    a, ca = _record(3, [1, 0, 1], [0], [greedy] * MAX_SEATS, P, seeds, temperature=1.0)
    b, cb = _record(3, [1, 0, 1], [0], [greedy] * MAX_SEATS, P, seeds, temperature=1.0)
    c, cc = _record(3, [1, 0, 1], [0], [greedy] * MAX_SEATS, P, seeds, temperature=1.0, rng_seed=6)
    assert ca == cb and np.array_equal(a.chosen[:ca[1]], b.chosen[:cb[1]])
    assert not np.array_equal(a.chosen[:min(ca[1], cc[1])], c.chosen[:min(ca[1], cc[1])])
    assert (a.prob[:ca[1]] < 1).any() and (a.prob[:ca[1]] > 0).all()


def test_evaluation_recounts_from_the_rows():
    P = QNet(16, 0, seed=9).to_params()
    [pt] = evaluate(P, ["greedy"], players=3, deals=150, seed=4)
    spec = AgentSpec("n", "n", policy=slot_policy(load_slot(P)))
    seeds = deal_seeds(4, 150)
    per_deal = np.zeros(150)
    frames = []
    for s in range(3):
        table = ["greedy"] * 3
        table[s] = spec
        rows = play_rounds(table, seeds, "classic")
        per_deal += rows[:, C_WINNER] == s
        pen = rows[:, C_PENALTY:C_PENALTY + 3]
        frames.append(pd.DataFrame({"deal": np.arange(150), "won": rows[:, C_WINNER] == s,
                                    "decided": rows[:, C_WINNER] >= 0,
                                    "diff": pen[:, s] - np.delete(pen, s, axis=1).mean(axis=1)}))
    per_deal /= 3
    assert (pt.deals, pt.rounds) == (150, 450)
    assert pt.win == pytest.approx(per_deal.mean())
    half = 1.959963984540054 * per_deal.std(ddof=1) / np.sqrt(150)
    assert (pt.win_lo, pt.win_hi) == pytest.approx((per_deal.mean() - half, per_deal.mean() + half), abs=1e-9)
    # the decided share and the penalty difference, recounted with pandas from the rows
    every = pd.concat(frames)
    assert pt.decided == pytest.approx(every["won"].sum() / every["decided"].sum())
    assert pt.penalty_diff == pytest.approx(every["diff"].mean())
    d = every.groupby("deal")[["won", "decided", "diff"]].sum()
    z = (d["won"] - pt.decided * d["decided"]) / d["decided"].mean()
    se = z.std(ddof=1) / np.sqrt(150)
    assert pt.decided_lo < pt.decided < pt.decided_hi
    assert pt.decided_hi - pt.decided_lo == pytest.approx(2 * 1.96 * se, rel=0.15)
    se_d = d["diff"].std(ddof=1) / 3 / np.sqrt(150)
    assert pt.penalty_diff_hi - pt.penalty_diff_lo == pytest.approx(2 * 1.976 * se_d, rel=0.01)
