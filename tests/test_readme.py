"""The README's runnable Python examples run as written."""

import re
from pathlib import Path

import pytest

README = (Path(__file__).parent.parent / "README.md").read_text()
BLOCKS = re.findall(r"```python\n(.*?)```", README, flags=re.S)
MARKERS = {"game": "from kc_sim.play import Game", "env": "from kc_sim.env.aec import env, policy_from_agent",
           "runner": "from kc_sim.play import play_rounds, play_matches, record_round"}
RUNNABLE = {name: b for b in BLOCKS for name, marker in MARKERS.items() if marker in b}


def test_the_examples_are_found():
    assert sorted(RUNNABLE) == sorted(MARKERS)


@pytest.mark.parametrize("name", sorted(MARKERS))
def test_readme_example_runs(name, monkeypatch):
    monkeypatch.chdir(Path(__file__).parent.parent)   # examples name agent files relative to the checkout
    exec(compile(RUNNABLE[name], "README.md", "exec"), {})
