"""The open games' table on its own (a clock the test moves): ids unguessable and distinct,
the bounds per client and in all, idle games dropped, a touched game kept."""

import pytest

from kc_sim.serve.games import GameTable, NoSuchGame, TooMany
from kc_sim.serve.limits import Limits


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


class Stub:
    touched = 0.0


def test_bounds_and_idle_expiry():
    clock = Clock()
    table = GameTable(Limits(max_games=3, max_games_per_client=2, idle_seconds=60), clock=clock)
    a, b = table.add("1.1.1.1", Stub()), table.add("1.1.1.1", Stub())
    assert a != b and len(a) == 24
    with pytest.raises(TooMany, match="limit per client"):
        table.add("1.1.1.1", Stub())
    c = table.add("2.2.2.2", Stub())
    with pytest.raises(TooMany, match="open games, its limit"):
        table.reserve("3.3.3.3")
    clock.now = 50
    table.get(a)                       # touched: lives 60 s more
    clock.now = 100
    assert table.get(a) is not None
    for gone in (b, c):
        with pytest.raises(NoSuchGame, match="expired"):
            table.get(gone)
    assert len(table) == 1
    table.remove(a)
    with pytest.raises(NoSuchGame):
        table.remove(a)
