"""The columns of the int64 rows the compiled loops write: one row per round, one per match.

Kept apart from ``loop`` (which compiles on import) so that readers of finished runs can
name the columns without loading the compiled core.
"""

from kc_sim.core.layout import MAX_SEATS

#: columns of a round row written by the loops
(C_SEED, C_DEALER, C_FIRST, C_WINNER, C_END, C_TURNS, C_ACTIONS, C_STOCK_LEFT, C_STATUS,
 C_BAD_ACTION, C_BAD_SEAT, C_MATCH, C_MATCH_ROUND) = range(13)
C_PENALTY = 13            # C_PENALTY + match seat (-1 for a seat not in the round)
ROUND_COLS = C_PENALTY + MAX_SEATS
#: columns of a match row
M_SEED, M_ROUNDS, M_WINNERS = 0, 1, 2   # winners: bit mask of match seats sharing the win
M_TOTAL = 3                             # M_TOTAL + seat: penalty total
MATCH_COLS = M_TOTAL + MAX_SEATS

STATUS_OK, STATUS_ILLEGAL, STATUS_TOO_LONG = 0, 1, 2

#: draw control variates (``kc_sim.core.draw_luck``), written only by the loops asked for them:
#: after the C_* columns, per feature of LUCK_FEATURES the sums by match seat, fixed point (x LUCK_SCALE)
LUCK_FEATURES = ("fit_now", "pen", "pen_late", "fit_hand")
N_LUCK = len(LUCK_FEATURES)
C_LUCK = ROUND_COLS       # C_LUCK + feature * MAX_SEATS + match seat
LUCK_ROUND_COLS = C_LUCK + MAX_SEATS * N_LUCK
LUCK_SCALE = 1 << 24
