"""``"a,b"`` agent lists, parsed in one place (``kc_sim.play.agents.registry.parse_agent_list``) for
the command line, ``kc-sim play``, tournaments and experiment files."""

import pytest

from kc_sim.errors import UserError
from kc_sim.play.agents.registry import load_agents, parse_agent_list


def test_names_are_split_and_stripped():
    assert parse_agent_list("greedy, merger ,random") == ["greedy", "merger", "random"]
    assert parse_agent_list(["greedy ", " human"]) == ["greedy", "human"]
    assert parse_agent_list("greedy") == ["greedy"]


@pytest.mark.parametrize("text,where", [("greedy,,random", "name 2 of 3"), ("greedy,", "name 2 of 2"),
                                        ("", "name 1 of 1"), (" , greedy", "name 1 of 2")])
def test_an_empty_name_is_a_one_line_error(text, where):
    with pytest.raises(UserError) as e:
        parse_agent_list(text, "--baselines")
    assert where in str(e.value) and "--baselines" in str(e.value) and "\n" not in str(e.value)


def test_load_agents_takes_a_list_text_or_specs():
    specs = load_agents("greedy,random")
    assert [s.name for s in specs] == ["greedy", "random"]
    assert load_agents(specs) == specs
