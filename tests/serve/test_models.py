"""``kc-sim serve --agents net:MODEL.zip``: a network trained by ``kc-sim train`` (here a
random one, written in the same model format) is offered by the name it was given, plays its
turns in a whole round through the API, and the saved record names it."""

import numpy as np
import pytest

from kc_sim.net.model import write_net
from kc_sim.net.policy import param_size
from kc_sim.records.check import check_file
from tests.serve.conftest import Server
from tests.serve.test_api import act, new_game


@pytest.fixture(scope="module")
def net_server(tmp_path_factory):
    base = tmp_path_factory.mktemp("serve-net")
    params = np.random.default_rng(5).normal(0, 0.3, param_size(8)).astype(np.float32)
    params[:2] = (8, 0)
    model = base / "tiny.zip"
    write_net(model, params, players=2, rules="classic")
    s = Server(base / "data", agents=f"greedy,net:{model}")
    s.model = f"net:{model}"
    yield s
    s.stop()


def test_a_served_network_plays_a_round_and_is_named(net_server, client):
    offered = [a["name"] for a in client.get(f"{net_server.base}api/config").json()["agents"]]
    assert offered == ["greedy", net_server.model]
    st = new_game(client, net_server, opponents=[net_server.model], seed=3, length="1")
    agent_steps = 0
    for _ in range(2000):
        if st["phase"] != "your_turn":
            break
        moves = [a for a in st["legal"] if a != "stop"]
        r = act(client, net_server, st["game"], moves[0] if moves and len(st["this_turn"]) < 30 else "stop", svg=False)
        assert r.status_code == 200, r.text
        st = r.json()
        agent_steps += len(st["steps"])
    assert st["phase"] == "match_over" and st["result"]["saved"] and agent_steps > 0
    rec = client.get(f"{net_server.base}api/games/{st['game']}/rounds/0").json()
    assert rec["players"][1 - st["you"]] == net_server.model
    n, problems = check_file(net_server.records)
    assert n == 1 and not problems
