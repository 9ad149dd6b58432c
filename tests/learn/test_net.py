"""The compiled network policy (kc_sim.net.policy): its forward pass equals torch's on
random inputs, the policy plays the best-scored legal action through the slots, a model file
is data checked before use, and a trained model is an agent like any other (net:PATH)."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from kc_sim.core import layout as L  # noqa: E402
from kc_sim.core.policy import MEM_SIZE  # noqa: E402
from kc_sim.core.rows import C_STATUS, STATUS_OK  # noqa: E402
from kc_sim.core.step import apply, deal  # noqa: E402
from kc_sim.net.features import F_ACT, F_CTX, WS_SIZE, legal_actions  # noqa: E402
from kc_sim.errors import UserError  # noqa: E402
from kc_sim.game.rules import parse_rules  # noqa: E402
from kc_sim.net import policy as NP  # noqa: E402
from kc_sim.net.model import read_net, write_net  # noqa: E402
from kc_sim.learn.qnet import QNet  # noqa: E402


def _params(h1=16, h2=0, seed=3):
    return QNet(h1, h2, seed=seed).to_params()


@pytest.mark.parametrize("h1,h2", [(32, 0), (16, 8)])
def test_compiled_forward_equals_torch(h1, h2):
    rng = np.random.default_rng(h1 + h2)
    net = QNet(h1, h2, seed=5)
    with torch.no_grad():                       # random biases too, so every term is exercised
        for p in net.parameters():
            p.add_(torch.randn(p.shape) * 0.3)
    ctx = rng.normal(size=(500, F_CTX)).astype(np.float32)
    x = rng.normal(size=(500, F_ACT)).astype(np.float32)
    x[rng.random(x.shape) < 0.3] = 0.0          # the compiled pass skips zero inputs
    q = np.zeros(500, np.float32)
    NP.forward_rows(net.to_params(), ctx, x, q)
    with torch.no_grad():
        ref = net(torch.from_numpy(ctx), torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(q, ref, rtol=1e-4, atol=1e-5)
    back = QNet.from_params(net.to_params())
    np.testing.assert_array_equal(back.to_params(), net.to_params())


def test_policy_plays_the_best_scored_legal_action():
    """Along random rounds, the slot policy's choice is the argmax of scores() over the legal
    actions (stop when nothing can be placed or moved), and never illegal."""
    P = _params()
    k = NP.load_slot(P)
    pol = NP.slot_policy(k)
    ws = np.zeros(WS_SIZE, np.int64)
    ctx = np.zeros(F_CTX, np.float32)
    acts = np.zeros(449, np.int64)
    acts2 = np.zeros(449, np.int64)
    xs = np.zeros((449, F_ACT), np.float32)
    q = np.zeros(449, np.float32)
    mem = np.zeros(MEM_SIZE, np.int64)
    rng = np.random.default_rng(0)
    checked = 0
    for seed in range(20):
        rules = parse_rules(["classic", "draw_first", "classic,decks=2", "classic,must_play_kings=true"][seed % 4])
        st = np.zeros(L.STATE_SIZE, np.int64)
        players = 2 + seed % 3
        deal(st, seed, players, 0, rules.codes())
        while not st[L.DONE]:
            s = int(st[L.SEAT])
            a = pol(st, s, mem)
            n = NP.scores(st, s, P, ws, ctx, acts, xs, q)
            assert n == legal_actions(st, s, acts2) and list(acts[:n]) == list(acts2[:n])
            plays = sum(1 for i in range(n) if acts[i] != L.STOP)
            expect = L.STOP if plays == 0 else int(acts[int(np.argmax(q[:n]))])
            assert a == expect
            checked += 1
            apply(st, a if rng.random() < 0.7 else int(acts[rng.integers(n)]))
    assert checked > 500


def test_model_file_round_trip_and_refusals(tmp_path):
    P = _params(8, 4)
    path = tmp_path / "m.zip"
    write_net(path, P, players=2, rules="classic", training={"steps": 5})
    m = read_net(path)
    np.testing.assert_array_equal(m.params, P)
    assert (m.h1, m.h2, m.header["encoding"]) == (8, 4, "actions/1")
    from kc_sim.net.model_file import Model, read_model, write_model

    def rewrite(**change):
        doc = read_model(path)
        header = dict(doc.header) | change.get("header", {})
        arrays = dict(doc.arrays) | change.get("arrays", {})
        bad = tmp_path / "bad.zip"
        write_model(bad, Model(doc.format, doc.version, header, arrays))
        return bad

    with pytest.raises(UserError, match="trained on the encoding actions/9"):
        read_net(rewrite(header={"encoding": "actions/9"}))
    with pytest.raises(UserError, match="expected float32"):
        read_net(rewrite(arrays={"params": P[:-3]}))
    nan = P.copy()
    nan[10] = np.nan
    with pytest.raises(UserError, match="non-finite"):
        read_net(rewrite(arrays={"params": nan}))
    with pytest.raises(UserError, match="hidden sizes"):
        read_net(rewrite(header={"h1": "x"}))


def test_a_model_is_an_agent_everywhere(tmp_path):
    """net:PATH in the runner, as a BatchEnv opponent, and through check_agent."""
    from kc_sim.env.batch import BatchEnv
    from kc_sim.play.agents.registry import load_agent
    from kc_sim.play.driver.runner import play_rounds
    from kc_sim.testing import check_agent

    path = tmp_path / "m.zip"
    write_net(path, _params(), players=2, rules="classic")
    spec = load_agent(f"net:{path}")
    assert spec.compiled and load_agent(f"net:{path}") is spec
    rows = play_rounds([spec, "greedy"], np.arange(50, dtype=np.int64), "classic")
    assert (rows[:, C_STATUS] == STATUS_OK).all()
    env = BatchEnv(8, opponents={1: f"net:{path}"})
    env.reset(3)
    for _ in range(200):
        env.step(env.sample())
    report = check_agent(f"net:{path}", rounds=2, permuted_rounds=1)
    assert report.passed, report
    with pytest.raises(UserError, match="no such file"):
        load_agent(f"net:{tmp_path / 'none.zip'}")


def test_an_sb3_model_refuses_an_encoding_it_was_not_trained_on(tmp_path):
    """The MaskablePPO models store their encoding too; sb3:PATH loads only the version kc-sim
    computes (a model stored before versions counts as version 1)."""
    from kc_sim.env.obs_planes import SIZES
    from kc_sim.learn.policy_net import PolicyNet
    from kc_sim.learn.sb3_agent import load_net

    rng = np.random.default_rng(0)
    w = [rng.normal(size=(8, SIZES["planes"])).astype(np.float32), rng.normal(size=(449, 8)).astype(np.float32)]
    b = [np.zeros(8, np.float32), np.zeros(449, np.float32)]
    for meta, ok in (({"observation": "planes", "encoding": "planes/1"}, True), ({"observation": "planes"}, True),
                     ({"observation": "planes", "encoding": "planes/2"}, False),
                     ({"observation": "planes", "encoding": "vector/1"}, False)):
        path = tmp_path / f"m{len(list(tmp_path.iterdir()))}.zip"
        PolicyNet(w, b, "tanh", meta).write_into(path)
        if ok:
            assert load_net(str(path)).meta["observation"] == "planes"
        else:
            with pytest.raises(UserError, match="encoding"):
                load_net(str(path))
