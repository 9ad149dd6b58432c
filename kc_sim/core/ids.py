"""Action ids and pile kinds for compiled code: the game's own functions, compiled inline.

The id table is in :mod:`kc_sim.game.actions` (one home): ``place_id(c, p)`` = c * 8 + p,
``move_id(s, p)`` = 416 + s * 8 + p, ``STOP`` = 448; ``id_card``, ``id_side``, ``id_pile`` decode.

Piles: 0..3 the sides N E S W (``range(N_SIDES)``), 4..7 the corners NE SE SW NW
(``range(FIRST_CORNER, N_PILES)``).

The arithmetic is written once, in ``kc_sim.game.actions``; this module compiles those
very functions with ``inline="always"``, so a compiled caller pays nothing for the
name (the code numba emits is the ``c * 8 + p`` it replaces).
"""

import numba as nb

from kc_sim.game import actions as _A
from kc_sim.game.actions import MOVE_BASE, N_ACTIONS, STOP  # noqa: F401 - the id table, for compiled callers
from kc_sim.game.cards import FIRST_CORNER, N_PILES, N_SIDES  # noqa: F401

_inline = nb.njit(cache=True, inline="always")

place_id = _inline(_A.place_id)
move_id = _inline(_A.move_id)
id_card = _inline(_A.id_card)
id_side = _inline(_A.id_side)
id_pile = _inline(_A.id_pile)
is_place = _inline(_A.is_place)
is_move = _inline(_A.is_move)
is_corner = _inline(_A.is_corner)
is_side = _inline(_A.is_side)
