"""Prototype for issue 36, kept to compare rollout lengths: ``search-net``'s decision
(:func:`agents.search_net.search_net_act`) with any ``kc-sim train`` model and rollout length.

The model is named by the environment variable ``KC_NET_MODEL``; ``KC_NET_WORLDS`` (default
16) and ``KC_NET_HORIZON`` (default 0: to the round's end, as ``search-net``) set the
worlds and the rollout length. They are read at import and compiled in as constants, and the
loop compiled for this policy is cached by its name: give each setting its own
``NUMBA_CACHE_DIR``. Use::

    KC_NET_MODEL=model.zip NUMBA_CACHE_DIR=/tmp/h4 kc-sim bench-agent \\
        experiments/net_rollouts.py:net_sampler_policy --baselines sampler --rounds 4000 --seed 7 -j 1

results/README.md §9d compares four turns with the round's end this way (with the
objective of the ``search-net`` of its time).
"""

from __future__ import annotations

import os

import numba as nb

from agents.sampler import ROLLOUT_DECISIONS
from agents.search_net import search_net_act
from kc_sim.core.policy import POLICY_SIG
from kc_sim.net.model import read_net

PARAMS = read_net(os.environ["KC_NET_MODEL"]).params
WORLDS = int(os.environ.get("KC_NET_WORLDS", "16"))
HORIZON = int(os.environ.get("KC_NET_HORIZON", "0")) or ROLLOUT_DECISIONS


@nb.njit(POLICY_SIG)
def net_sampler_policy(st, seat, mem):
    return search_net_act(st, seat, mem, PARAMS, WORLDS, HORIZON)
