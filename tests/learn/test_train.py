"""``kc-sim train`` for real (sb3-contrib's MaskablePPO, torch), a few thousand steps, and the
trained model as the agent ``sb3:model.zip`` in the places agents are named."""

from __future__ import annotations

import subprocess
import sys
import zipfile

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("sb3_contrib")

from kc_sim.errors import UserError  # noqa: E402
from kc_sim.learn.policy_net import PolicyNet  # noqa: E402
from kc_sim.play.agents.names import base_label  # noqa: E402
from kc_sim.play.agents.registry import load_agent  # noqa: E402

KC = [sys.executable, "-m", "kc_sim.cli"]


def _run(*args, cwd=None, timeout=300):
    return subprocess.run([*KC, *args], capture_output=True, text=True, cwd=cwd, timeout=timeout)


def _same_choices(net, model, venv, steps):
    """Along ``steps`` steps of ``venv``, the NumPy net picks what sb3 predicts (deterministic), all legal."""
    obs, _ = venv.reset(seed=9)
    for _ in range(steps):
        mask = venv.action_masks()
        ours = net.act(obs, mask)
        theirs, _ = model.predict(obs, action_masks=mask, deterministic=True)
        assert np.array_equal(ours, theirs)
        assert mask[np.arange(venv.num_envs), ours].all()
        obs, *_ = venv.step(ours)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A model trained 2,048 steps against greedy at 2 players, through the command line."""
    d = tmp_path_factory.mktemp("train")
    r = _run("train", "--method", "ppo", "--opponent", "greedy", "--steps", "2048", "--envs", "16", "--evals", "1",
             "--eval-rounds", "200", "--out", str(d / "model.zip"), "--seed", "3")
    assert r.returncode == 0, r.stderr
    return d, r


def test_train_writes_the_model_the_curve_and_the_figure(trained):
    d, r = trained
    assert "compile and start-up" in r.stderr and "steps/s" in r.stderr          # progress lines
    assert "model: " in r.stdout and "sb3:" in r.stdout and "score vs greedy" in r.stdout
    curve = pd.read_parquet(d / "model.curve.parquet")
    assert list(curve["steps"]) == [0, 2048]
    assert ((curve["score_lo"] <= curve["score"]) & (curve["score"] <= curve["score_hi"])).all()
    assert (curve["wins"] + curve["ties"] + curve["losses"] == 200).all()
    assert (d / "model.curve.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_numpy_policy_plays_what_maskable_ppo_predicts(trained):
    """The weights stored in the zip give sb3's own deterministic masked choice."""
    from sb3_contrib import MaskablePPO

    from kc_sim.env.gym_env import KcVectorEnv

    d, _ = trained
    model = MaskablePPO.load(d / "model.zip", device="cpu")
    net = PolicyNet.read_from(d / "model.zip")
    assert net.meta["observation"] == "planes" and net.meta["opponents"] == "greedy"
    _same_choices(net, model, KcVectorEnv(64, players=2, opponents="greedy"), 30)


def test_sb3_agent_plays_a_tournament_in_worker_processes(trained, tmp_path):
    d, _ = trained
    name = f"sb3:{d / 'model.zip'}"
    r = _run("tournament", "--agents", f"{name},random", "--players", "2", "--rounds", "300", "--jobs", "2",
             "--out", str(tmp_path / "run"), "--quiet")
    assert r.returncode == 0, r.stderr
    summary = pd.read_parquet(tmp_path / "run" / "summary.parquet")
    own = summary[summary["opponent"].isna()]
    assert set(own["agent"]) == {name, "random"}
    assert own.loc[own["agent"] == name, "rounds"].item() == 300
    assert base_label(name) == name          # a path is not cut at its colon


def test_sb3_agent_in_bench_agent_and_the_aec_env(trained):
    pytest.importorskip("pettingzoo")
    from kc_sim.env.aec import env as aec_env
    from kc_sim.env.aec import policy_from_agent

    d, _ = trained
    r = _run("bench-agent", f"sb3:{d / 'model.zip'}", "--baselines", "random", "--rounds", "200", "-j", "1")
    assert r.returncode == 0, r.stderr
    assert "random" in r.stdout and "win rate" in r.stdout
    e = aec_env(players=2)
    e.reset(options={"round_seed": 4})
    pol = policy_from_agent(f"sb3:{d / 'model.zip'}")
    steps = 0
    for agent in e.agent_iter():
        obs, _, term, trunc, _ = e.last()
        if term or trunc:
            e.step(None)
            continue
        a = pol(obs, e)
        assert obs["action_mask"][a] == 1
        e.step(a)
        steps += 1
    assert steps > 5


def test_resume_continues_the_curve(trained, tmp_path):
    d, _ = trained
    model = tmp_path / "model.zip"
    model.write_bytes((d / "model.zip").read_bytes())
    (tmp_path / "model.curve.parquet").write_bytes((d / "model.curve.parquet").read_bytes())
    r = _run("train", "--method", "ppo", "--opponent", "greedy", "--steps", "4096", "--envs", "16", "--evals", "1", "--eval-rounds",
             "200", "--out", str(model), "--seed", "3", "--resume", "--quiet")
    assert r.returncode == 0, r.stderr
    assert list(pd.read_parquet(tmp_path / "model.curve.parquet")["steps"]) == [0, 2048, 4096]
    r = _run("train", "--method", "ppo", "--opponent", "random", "--steps", "8192", "--envs", "16", "--out", str(model), "--resume")
    assert r.returncode == 2 and "cannot resume" in r.stderr and "Traceback" not in r.stderr
    with zipfile.ZipFile(model, "a") as z:        # changed since kc-sim wrote it: sb3 may not unpickle it
        z.writestr("extra", b"")
    r = _run("train", "--method", "ppo", "--opponent", "greedy", "--steps", "8192", "--envs", "16", "--out", str(model), "--resume")
    assert r.returncode == 2 and "did not write this file" in r.stderr and "Traceback" not in r.stderr


@pytest.mark.parametrize("args,says", [
    (["--opponent", "nobody"], "unknown agent 'nobody'"),
    (["--out", "model.pt"], "expected a .zip file"),
    (["--opponent", "tests/helpers/agents/buggy.py:Buggy"], "a Python agent"),
    (["--players", "9"], "players"),
    (["--reward", "score"], "bad reward"),
    (["--gamma", "2"], "bad --gamma 2.0: expected a number in [0, 1]"),
])
def test_train_bad_input_is_one_line(args, says):
    r = _run("train", "--method", "ppo", "--steps", "1000", *args)
    assert r.returncode == 2, r.stderr
    assert says in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_sb3_bad_names():
    with pytest.raises(UserError, match="no such file"):
        load_agent("sb3:no/such/model.zip")
    with pytest.raises(UserError, match="expected sb3:path"):
        load_agent("sb3:")


def test_opens_head_is_played_in_numpy_as_sb3_predicts(tmp_path):
    """--observation planes_opens trains OpensPolicy (logits + a learned weight x opens);
    the stored NumPy net, head included, gives sb3's own choices."""
    from sb3_contrib import MaskablePPO

    from kc_sim.env.gym_env import KcVectorEnv
    from kc_sim.learn.train import train

    res = train("greedy", 2, 2048, tmp_path / "m.zip", envs=16, evals=0, eval_rounds=100, observation="planes_opens",
                seed=2, log=None)
    model = MaskablePPO.load(res.model, device="cpu")
    net = PolicyNet.read_from(res.model)
    assert type(model.policy).__name__ == "OpensPolicy"
    from kc_sim.learn.opens_policy import OPENS_SCALE

    assert net.opens_weight == pytest.approx(OPENS_SCALE * float(model.policy.opens_weight.item()))
    assert net.opens_weight != 0
    _same_choices(net, model, KcVectorEnv(32, players=2, opponents="greedy", observation="planes_opens"), 25)
