"""The agents that ship a network: ``net`` (the models inside the package, one for two seats
and one for more) and ``search-net`` (the sampler's search with that network's rollouts). The
models load as data, each plays the tables it is for, both agents pass check_agent, and the
compiled forward pass of the shipped weights equals torch's on the observations of random
rounds."""

from __future__ import annotations

import zipfile
from importlib.resources import files

import numpy as np
import pytest

from agents.net import MODELS, shipped_model
from kc_sim.core import layout as L
from kc_sim.core.step import apply, deal
from kc_sim.game.rules import parse_rules
from kc_sim.net import policy as NP
from kc_sim.net.features import F_ACT, F_CTX, WS_SIZE, legal_actions
from kc_sim.net.model import read_net
from kc_sim.play.agents.registry import load_agent, trusted
from kc_sim.play.driver.runner import play_rounds
from kc_sim.testing import check_agent


@pytest.mark.parametrize("table,players", [("two", 2), ("more", 4)])
def test_the_shipped_models_are_small_data_with_their_provenance(table, players):
    path = files("agents") / MODELS[table]
    assert path.stat().st_size <= 2**20                           # both together at most 2 MB
    with zipfile.ZipFile(str(path)) as z:
        assert all(n.startswith("kc-sim/") for n in z.namelist())  # nothing but the header and arrays
    net = read_net(str(path))
    t = net.header["training"]
    assert t["command"].startswith("kc-sim train ") and "--seed" in t["command"]
    assert t["code"] and t["steps"] > 0 and t["curve"].startswith("results/")
    assert net.header["players"] == players and net.h1 >= 1


@pytest.mark.parametrize("players,table", [(2, "two"), (3, "more"), (4, "more")])
def test_net_plays_the_model_of_its_table(players, table):
    """``net`` plays each table as its model loaded by path does (its own slot), and the two
    models play differently, so a table given the wrong model would show."""
    seeds = np.arange(6, dtype=np.int64)
    rivals = ["greedy"] * (players - 1)
    other = "more" if table == "two" else "two"
    rounds = {t: play_rounds(["net:" + str(files("agents") / MODELS[t]), *rivals], seeds, "classic")
              for t in (table, other)}
    assert not np.array_equal(rounds[table], rounds[other])
    np.testing.assert_array_equal(play_rounds(["net", *rivals], seeds, "classic"), rounds[table])


def _observations(params, n_rounds=6):
    """(ctx, x, q) of every legal action at every decision of a few random rounds (2 to 4
    players, two rule sets), scored by the compiled pass."""
    ws = np.zeros(WS_SIZE, np.int64)
    ctx = np.zeros(F_CTX, np.float32)
    acts = np.zeros(449, np.int64)
    xs = np.zeros((449, F_ACT), np.float32)
    q = np.zeros(449, np.float32)
    rng = np.random.default_rng(11)
    out_ctx, out_x, out_q = [], [], []
    for seed in range(n_rounds):
        st = np.zeros(L.STATE_SIZE, np.int64)
        deal(st, seed, 2 + seed % 3, 0, parse_rules(["classic", "draw_first"][seed % 2]).codes())
        while not st[L.DONE]:
            s = int(st[L.SEAT])
            n = NP.scores(st, s, params, ws, ctx, acts, xs, q)
            out_ctx += [ctx.copy()] * n
            out_x.append(xs[:n].copy())
            out_q.append(q[:n].copy())
            apply(st, int(acts[rng.integers(n)]))
    return np.array(out_ctx), np.concatenate(out_x), np.concatenate(out_q)


@pytest.mark.parametrize("table", MODELS)
def test_compiled_forward_of_the_shipped_weights_equals_torch(table):
    torch = pytest.importorskip("torch")
    from kc_sim.learn.qnet import QNet
    params = shipped_model(table).params
    ctx, x, q = _observations(params)
    assert len(q) > 1000
    net = QNet.from_params(params)
    with torch.no_grad():
        ref = net(torch.from_numpy(ctx), torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(q, ref, rtol=1e-4, atol=1e-4)
    q2 = np.zeros(len(q), np.float32)
    NP.forward_rows(params, ctx, x, q2)                  # the same pass on given inputs
    np.testing.assert_array_equal(q2, q)


@pytest.mark.parametrize("name,rounds", [("net", 8), ("search-net:2", 1)])
def test_shipped_agents_pass_check_agent(name, rounds):
    report = check_agent(name, rounds=rounds, permuted_rounds=1)
    assert report.passed, str(report)


def test_names_options_and_trust():
    net, search = load_agent("net"), load_agent("search-net")
    assert (net.name, search.name) == ("net", "search-net")
    assert trusted(net) and trusted(search)
    assert load_agent("search-net:3").name == "search-net-3"
    assert load_agent("search-net-3") is load_agent("search-net:3")
    assert load_agent("net:" + str(files("agents") / MODELS["two"])).policy is not net.policy   # a file by path: its own slot


def test_search_net_is_seeded_and_differs_from_net():
    seeds = np.arange(4, dtype=np.int64)
    a = play_rounds(["search-net:2", "greedy"], seeds, "classic")
    assert np.array_equal(a, play_rounds(["search-net:2", "greedy"], seeds, "classic"))
    b = play_rounds(["net", "greedy"], seeds, "classic")
    assert (a[:, 8] == 0).all() and (b[:, 8] == 0).all()       # C_STATUS ok


def test_search_net_adds_the_networks_own_line_once():
    """``search-net``'s candidates hold the line the network itself would play this turn
    (replayed here action by action), once: added when no other candidate is that line, not
    when one is (both cases happen on these positions)."""
    from agents.plans import MAX_PLAN, PLAN0
    from agents.sampler import decision_buffers, open_decision
    from agents.search_net import add_net_line

    params = shipped_model().params
    rng = np.random.default_rng(3)
    added = kept = 0
    for seed in range(60):
        st = np.zeros(L.STATE_SIZE, np.int64)
        deal(st, seed, 2 + seed % 2, 0, parse_rules("classic").codes())
        for _ in range(int(rng.integers(0, 40))):       # somewhere into the round
            if st[L.DONE]:
                break
            apply(st, int(rng.choice(_legal(st))))
        if st[L.DONE]:
            continue
        seat = int(st[L.SEAT])
        plans, lens, scores, ws = decision_buffers()
        a, k = open_decision(st, seat, np.zeros(PLAN0 + MAX_PLAN, np.int64), plans, lens, scores, ws)
        if a >= 0:
            continue
        k2 = add_net_line(st, seat, params, plans, lens, k)
        w, line, nws = st.copy(), [], np.zeros(WS_SIZE, np.int64)
        while not w[L.DONE]:
            x = NP.net_act(w, seat, params, nws)
            if x == L.STOP:
                break
            line.append(x)
            apply(w, x)
        lines = [tuple(plans[i, :lens[i]]) for i in range(k2)]
        assert tuple(line) in lines and len(set(lines)) == len(lines)
        added += k2 == k + 1
        kept += k2 == k
    assert added > 5 and kept > 5, (added, kept)


def _legal(st):
    acts = np.zeros(449, np.int64)
    n = legal_actions(st, int(st[L.SEAT]), acts)
    return acts[:n]
