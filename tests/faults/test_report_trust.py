"""A run folder is data: ``kc-sim report`` replays sample rounds with the run's agents, and an
agent the manifest names by a file is code. The report runs it only when asked
(``--run-agents``); otherwise the file is never imported and the report says why the sample
rounds are missing."""

from __future__ import annotations

from tests.faults.hostile import kc

AGENT = '''
from pathlib import Path

Path(__file__).with_name("imported").write_text("ran")

from kc_sim.play.agents.interface import PythonAgent


class First(PythonAgent):
    def act(self, obs):
        return obs.legal[0]
'''


def test_report_imports_no_agent_file_named_by_a_run_folder(tmp_path):
    (tmp_path / "first.py").write_text(AGENT)
    marker = tmp_path / "imported"
    r = kc("tournament", "--agents", f"{tmp_path / 'first.py'}:First,greedy", "--rounds", "40", "--jobs", "1",
           "--quiet", "--out", tmp_path / "run")
    assert r.returncode == 0, r.stderr
    marker.unlink()
    r = kc("report", tmp_path / "run")
    assert r.returncode == 0, r.stderr
    assert not marker.exists()
    page = (tmp_path / "run" / "report.html").read_text()
    assert "No sample rounds: the run names agents that are code" in page and "--run-agents" in page
    assert 'class="kc-replay"' not in page
    r = kc("report", tmp_path / "run", "--run-agents")
    assert r.returncode == 0, r.stderr
    assert marker.exists() and 'class="kc-replay"' in (tmp_path / "run" / "report.html").read_text()


def test_names_code_tells_code_from_data():
    from kc_sim.play.agents.registry import names_code

    assert not any(map(names_code, ["greedy", "pile-merger", "merger", "sampler:8", "sb3:m.zip", "openspiel:ismcts"]))
    assert all(map(names_code, ["x.py:A", "dir/x.py:A", "pkg.mod:A"]))
