"""A mistyped rule switch, preset or value is refused with the closest valid spelling."""

import pytest

from kc_sim.cli import root
from kc_sim.errors import UserError
from kc_sim.game.rules import parse_rules


@pytest.mark.parametrize("text,hint", [
    ("clasic", "did you mean classic?"),
    ("draw_frist", "did you mean draw_first?"),
    ("drw=end", "did you mean draw=end?"),
    ("classic,draw=ned", "did you mean draw=end?"),
    ("scoring=kings", "did you mean scoring=kings10?"),
    ("musst_play_kings=true", "did you mean must_play_kings=true?"),
])
def test_did_you_mean(text, hint):
    with pytest.raises(UserError, match="did you mean") as e:
        parse_rules(text)
    assert hint in str(e.value) and "expected one of" in str(e.value)


def test_no_guess_when_nothing_is_close():
    with pytest.raises(UserError) as e:
        parse_rules("zzz=1")
    assert "did you mean" not in str(e.value)


def test_the_command_line_says_it_on_one_line(capsys):
    assert root.main(["tournament", "--agents", "greedy,random", "--rules", "clasic", "--rounds", "10"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "did you mean classic?" in err[0]
