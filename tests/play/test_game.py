"""``Game.from_deck``: a round dealt from an explicit deck order is the round ``Game`` deals
from a seed whose shuffle gives that order; a deck of the wrong size is refused."""

from __future__ import annotations

import numpy as np
import pytest

from kc_sim.core import layout as L
from kc_sim.core.step import shuffle_stock
from kc_sim.errors import UserError
from kc_sim.play.table.game import Game


@pytest.mark.parametrize("players,rules", [(2, "classic"), (4, "classic"), (5, "decks=2")])
def test_a_round_from_the_deck_a_seed_shuffles_is_the_round_of_that_seed(players, rules):
    seeded = Game(players, rules, seed=11)
    st = np.zeros(L.STATE_SIZE, dtype=np.int64)
    shuffle_stock(st, 11, seeded.rules.decks)
    deck = st[L.STOCK:L.STOCK + st[L.STOCK_LEN]].copy()
    dealt = Game.from_deck(deck, players, seeded.dealer, rules)
    assert dealt.snapshot() == seeded.snapshot() and np.array_equal(dealt.state, seeded.state)
    assert dealt.legal_actions() == seeded.legal_actions()


def test_a_deck_of_the_wrong_size_or_a_bad_dealer_is_refused():
    with pytest.raises(UserError, match="bad deck: 51 cards, expected 52"):
        Game.from_deck(range(51), 2, 0)
    with pytest.raises(UserError, match="bad dealer 2"):
        Game.from_deck(range(52), 2, 2)
