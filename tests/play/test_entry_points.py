"""Agents registered by another installed package, through the ``kc_sim.agents`` entry points.

The plugin package here is real, not mocked: a module plus a ``.dist-info`` folder with
its ``entry_points.txt``, on ``PYTHONPATH`` of a fresh ``kc-sim`` process, which is how
``importlib.metadata`` sees any installed distribution."""

import os
import subprocess
import sys
from pathlib import Path

PLUGIN = '''
from kc_sim.core.policy import compiled_policy
from kc_sim.core.layout import STOP
from kc_sim.play.agents.interface import PythonAgent


@compiled_policy
def stopper(st, seat, mem):
    """Always stops: keeps every card it was dealt."""
    return STOP


class FirstLegal(PythonAgent):
    """Plays the first legal action."""

    def act(self, obs):
        return obs.legal[0]
'''

ENTRY_POINTS = """[kc_sim.agents]
stopper = kc_plugin_demo:stopper
first-legal = kc_plugin_demo:FirstLegal
broken = kc_plugin_demo_missing:nothing
"""


def _plugin(tmp_path: Path) -> dict:
    (tmp_path / "kc_plugin_demo.py").write_text(PLUGIN)
    info = tmp_path / "kc_plugin_demo-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: kc-plugin-demo\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(ENTRY_POINTS)
    env = dict(os.environ)
    env["PYTHONPATH"] = str(tmp_path) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _kc_sim(args, env, cwd):
    return subprocess.run([sys.executable, "-m", "kc_sim.cli", *args], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=600)


def test_a_plugin_package_registers_agents_by_name(tmp_path):
    env = _plugin(tmp_path)
    listed = _kc_sim(["agents"], env, tmp_path)
    assert listed.returncode == 0, listed.stderr
    names = [line.split()[0] for line in listed.stdout.splitlines() if line.strip()]
    assert {"stopper", "first-legal", "greedy", "random"} <= set(names)

    out = tmp_path / "run"
    r = _kc_sim(["tournament", "--agents", "stopper,first-legal,greedy", "--rounds", "600", "--jobs", "2",
                 "--out", str(out), "--quiet"], env, tmp_path)
    assert r.returncode == 0, r.stderr
    import pandas as pd

    summary = pd.read_parquet(out / "summary.parquet")
    assert {"stopper", "first-legal", "greedy"} <= set(summary["agent"])
    mean = summary.groupby("agent")["mean_penalty"].max()
    assert mean["stopper"] > mean["greedy"]       # it never sheds a card, so it keeps more


def test_a_broken_entry_fails_alone_with_one_line(tmp_path):
    env = _plugin(tmp_path)
    r = _kc_sim(["tournament", "--agents", "broken,greedy", "--rounds", "100"], env, tmp_path)
    assert r.returncode == 2
    assert "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "broken" in lines[0] and "kc_plugin_demo_missing" in lines[0], r.stderr
    ok = _kc_sim(["tournament", "--agents", "stopper,greedy", "--rounds", "100", "--quiet",
                  "--out", str(tmp_path / "ok")], env, tmp_path)
    assert ok.returncode == 0, ok.stderr
