"""Where each field lives in the flat int64 round state the compiled core works on.

A round is one ``np.int64`` array of length ``STATE_SIZE`` (pgx style: no objects,
copy it with ``.copy()``). Hands are card masks in two planes so two-deck games stay
on masks: plane 0 holds the cards a seat has at least once, plane 1 those it has
twice (always empty with one deck). A pile is a card mask (a pile never holds two
cards of one rank, so one plane is enough), its base, its top and its size.
Empty piles have base = top = -1.
"""

# the table and the action ids are the game's (kc_sim.game.cards, kc_sim.game.actions);
# re-exported so the core reads every number it indexes with from this one module
from kc_sim.game.actions import MOVE_BASE, N_ACTIONS, STOP  # noqa: F401
from kc_sim.game.cards import FIRST_CORNER, N_PILES, N_SIDES  # noqa: F401
from kc_sim.game.variants import N_RULE_CODES

MAX_SEATS = 8
MAX_STOCK = 104

# header
PLAYERS = 0        # number of seats in the round
SEAT = 1           # seat to act
DEALER = 2
DONE = 3           # 1 once the round is over
WINNER = 4         # winning seat, -1 if none
END = 5            # END_NONE, END_OUT, END_BLOCKED
TURNS = 6          # turns started so far
ACTIONS = 7        # place/move actions made so far
TURN_ACTIONS = 8   # place/move actions in the current turn
DREW = 9           # card drawn during the current turn, -1 if none
IDLE = 10          # consecutive idle turns (no action, no draw)
STOCK_POS = 11     # index in STOCK of the next card to draw
STOCK_LEN = 12     # number of cards in STOCK (drawn ones included)
RULES = 13         # the six round switches, in kc_sim.game.variants' R_* order
FIRST = RULES + N_RULE_CODES   # seat of the first player
HAND = 24          # HAND + 2*seat + plane: card masks
HAND_N = 40        # HAND_N + seat: number of cards in hand
PILE_MASK = 48     # PILE_MASK + p
PILE_BASE = 56     # PILE_BASE + p
PILE_TOP = 64      # PILE_TOP + p
PILE_SIZE = 72     # PILE_SIZE + p
PENALTY = 80       # PENALTY + seat, set when the round is over
STOCK = 88         # STOCK + i: card ids, next to draw at STOCK_POS
STATE_SIZE = STOCK + MAX_STOCK

END_NONE, END_OUT, END_BLOCKED = 0, 1, 2
END_NAMES = ("none", "out", "blocked")
