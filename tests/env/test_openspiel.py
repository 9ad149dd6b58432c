"""kc-sim as an OpenSpiel Python game: OpenSpiel's own random-simulation test, the deal
as a chance node over kc-sim's round seeds, returns against kc-sim's own round, the
information state and its resampling, and IS-MCTS running on the game."""

import random

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

from open_spiel.python.algorithms import ismcts, mcts  # noqa: E402

from kc_sim.env import openspiel_game as og  # noqa: E402
from kc_sim.env.aec import raw_env  # noqa: E402
from kc_sim.env.obs_vector import O_DEALER, OBS_SIZE, fill_observation  # noqa: E402
from kc_sim.errors import UserError  # noqa: E402
from kc_sim.game.cards import card_text  # noqa: E402
from kc_sim.play.table.game import Game  # noqa: E402

CASES = [
    (2, "classic"),
    (3, "draw_first"),
    (4, "classic,draw=if_stuck,must_play_kings=true,scoring=face"),
    (6, "classic,decks=2,draw=start"),
]


@pytest.mark.parametrize("players,rules", CASES)
def test_openspiel_random_simulation(players, rules):
    game = og.load(players, rules)
    pyspiel.random_sim_test(game, num_sims=2, serialize=False, verbose=False)


def test_random_simulation_with_serialization_and_game_string():
    game = pyspiel.load_game("python_kings_in_the_corner_v1(players=3,rules=draw_first;scoring:face)")
    assert game.rules == og.rules_param("draw_first,scoring=face")
    assert game.num_players() == 3
    again = pyspiel.load_game(str(game))             # the game string parses back to the same game
    assert str(again) == str(game) and again.rules == game.rules
    pyspiel.random_sim_test(game, num_sims=1, serialize=True, verbose=False)


def test_parameters_are_checked():
    with pytest.raises(UserError, match="players"):
        og.load(5, "classic")
    with pytest.raises(UserError, match="unknown rule switch"):
        og.load(2, "classic;dra:end")
    game = og.load(8, "decks=2")
    assert game.num_players() == 8 and game.get_type().max_num_players == 8
    assert game.num_distinct_actions() == 449
    assert game.get_type().utility == pyspiel.GameType.Utility.GENERAL_SUM
    assert game.min_utility() == -176.0 and game.max_utility() == 0.0


def _dealt(game, outcome):
    s = game.new_initial_state()
    assert s.is_chance_node()
    outcomes = dict(s.chance_outcomes())
    assert len(outcomes) == game.seeds and outcome in outcomes
    assert outcomes[outcome] == pytest.approx(1.0 / game.seeds)
    s.apply_action(outcome)
    return s


@pytest.mark.parametrize("players,rules", CASES)
def test_chance_outcome_is_kc_sims_deal_for_that_round_seed(players, rules):
    game = og.load(players, rules, seeds=1000, first_seed=123_456)
    for outcome in (0, 7, 999):
        s = _dealt(game, outcome)
        seed = 123_456 + outcome
        assert s.round_seed == seed
        e = raw_env(players=players, rules=rules)
        e.reset(options={"round_seed": seed})
        ref = e.unwrapped.game
        g = s.kc_game
        assert g.snapshot() == ref.snapshot()           # dealer, every hand, every pile, stock order
        assert g.initial == ref.initial
        assert s.current_player() == ref.seat
        assert s.legal_actions() == ref.legal_actions()
        assert s.history() == [outcome]


def _play_random(state, rng, limit=None):
    actions = []
    while not state.is_terminal() and (limit is None or len(actions) < limit):
        a = rng.choice(state.legal_actions())
        actions.append(a)
        state.apply_action(a)
    return actions


@pytest.mark.parametrize("players,rules", CASES)
def test_returns_equal_kc_sims_penalties_and_env_rewards(players, rules):
    game = og.load(players, rules, seeds=50)
    for outcome in (3, 41):
        s = _dealt(game, outcome)
        actions = _play_random(s, random.Random(outcome))
        g = Game(players, rules, outcome)                    # kc-sim's own round, same seed, same actions
        for a in actions:
            g.play(a)
        assert g.over and s.is_terminal()
        assert s.returns() == [-float(p) for p in g.penalties]
        assert s.rewards() == s.returns()
        e = raw_env(players=players, rules=rules)            # and the AEC env's rewards
        e.reset(options={"round_seed": outcome})
        total = dict.fromkeys(e.agents, 0.0)
        for a in actions:
            e.step(a)
            for k, r in e.rewards.items():
                total[k] += r
        assert [total[f"player_{i}"] for i in range(players)] == s.returns()


def _all_cards(g):
    cards = [c for s in range(g.players) for c in g.hand(s)] + g.stock + [c for p in g.piles for c in p]
    return sorted(cards)


@pytest.mark.parametrize("players,rules", CASES)
def test_resample_keeps_what_the_player_knows(players, rules):
    game = og.load(players, rules, seeds=100)
    rng = random.Random(players)
    seen = {}                                    # (seat, its information state) -> its hand
    changed = 0
    for outcome in (5, 17):
        s = _dealt(game, outcome)
        _play_random(s, rng, limit=40 + 10 * outcome % 30)
        if s.is_terminal():
            continue
        g = s.kc_game
        u = np.random.RandomState(outcome)
        for p in range(players):
            for _ in range(5):
                t = s.resample_from_infostate(p, u.uniform)
                h = t.kc_game
                assert t.information_state_string(p) == s.information_state_string(p)
                assert t.information_state_tensor(p) == s.information_state_tensor(p)
                assert t.observation_string(p) == s.observation_string(p)
                assert t.observation_tensor(p) == s.observation_tensor(p)
                assert t.current_player() == s.current_player()
                assert t.legal_actions() == s.legal_actions() or t.current_player() != p
                assert h.hand(p) == g.hand(p) and h.piles == g.piles
                assert [len(h.hand(q)) for q in range(players)] == [len(g.hand(q)) for q in range(players)]
                assert len(h.stock) == len(g.stock)
                assert _all_cards(h) == _all_cards(g)      # the same multiset of cards
                changed += h.snapshot() != g.snapshot()
                for q in range(players):                   # the others' records follow their new hands
                    key = (q, t.information_state_string(q))
                    assert seen.setdefault(key, h.hand(q)) == h.hand(q)
                assert s.kc_game.snapshot() == g.snapshot()          # the original is untouched
                _play_random(t, rng)                                 # a sampled world plays on legally
                assert t.is_terminal()
    assert changed > 0


def test_information_state_hides_others_draws():
    game = og.load(2, "classic", seeds=10)
    s = _dealt(game, 2)
    for _ in range(4):
        mover = s.current_player()
        s.apply_action(448)                                          # stop: the mover draws
        seat, action, gains = s._r.events[-1]
        assert (seat, action) == (mover, 448)
        (drawer, card), = gains
        assert drawer == mover
        text = card_text(card)
        assert s.information_state_string(mover).endswith(f"{mover}:stop+{mover}:{text}")
        assert s.information_state_string(1 - mover).endswith(f"{mover}:stop+{mover}:?")
    own = s.information_state_string(0)
    assert "".join(card_text(c) for c in s.kc_game.initial["hands"][0]) in own
    assert "".join(card_text(c) for c in s.kc_game.initial["hands"][1]) not in own


def test_state_from_view_shows_exactly_the_view():
    for players, rules in CASES:
        game = og.load(players, rules)
        g = Game(players, rules, 99)
        rng = random.Random(0)
        for _ in range(25):
            if g.over:
                break
            g.play(rng.choice(g.legal_actions()))
        if g.over:
            continue
        view = g.observe()
        s = og.state_from_view(game, view, rng=random.Random(1))
        h = s.kc_game
        assert s.current_player() == view.seat
        assert tuple(s.legal_actions()) == view.legal
        assert tuple(h.hand(view.seat)) == view.hand
        assert tuple(tuple(p) for p in h.piles) == view.piles
        assert len(h.stock) == view.stock_size
        assert tuple(len(h.hand(q)) for q in range(players)) == view.hand_sizes
        assert h.turn_actions == view.turn_actions and h.drew == view.drew
        assert _all_cards(h) == _all_cards(g)
        mine, real = np.zeros(OBS_SIZE, np.int8), np.zeros(OBS_SIZE, np.int8)
        fill_observation(h.state, view.seat, mine)
        fill_observation(g.state, view.seat, real)
        keep = np.arange(OBS_SIZE) != O_DEALER           # the view does not show the dealer
        assert (mine[keep] == real[keep]).all()


def test_ismcts_bot_plays_the_game():
    game = og.load(2, "draw_first", seeds=20)
    s = _dealt(game, 4)
    rs = np.random.RandomState(0)
    bot = ismcts.ISMCTSBot(game, mcts.RandomRolloutEvaluator(1, rs), 10.0, 8, random_state=rs)
    for _ in range(6):
        if s.is_terminal():
            break
        a = bot.step(s)
        assert a in s.legal_actions()
        s.apply_action(a)
