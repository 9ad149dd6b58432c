"""The ``random`` agent: the core's uniformly random legal play (:func:`kc_sim.core.policy.random_policy`),
and ``random:N``, the same play from a random stream salted by N.

``random:N`` (N from 1 to 2**31 - 1, recorded as ``random-N``) exists for A/A runs: two
copies of one agent that play alike in distribution but make different random choices.
Two seats both named ``random`` would not do: a seat's generator is seeded from the
round seed and the *seat*, so in a seat-balanced schedule the two copies swap streams
with their seats and replay each other's games. The rule: at the seat's first decision
of each round, ``random:N`` replaces its generator state ``mem[0]`` (seeded by the loop
from the round seed and the seat) with ``derive(mem[0], N)`` (``kc_sim.core.rng``: a
fresh 63-bit splitmix64 sub-stream), marks ``mem[MEM_SIZE - 1]`` as done for the round,
and from then on plays exactly ``random_policy``. So ``random:1`` and ``random:2`` in one
seat of one deal draw from different, independent-looking streams; each is reproducible
from the seeds; ``random`` itself is untouched (its golden rounds are unchanged).
"""

from functools import lru_cache

import numba as nb

from kc_sim.core.policy import MEM_SIZE, POLICY_SIG, random_policy
from kc_sim.core.rng import derive
from kc_sim.play.agents.interface import AgentOption, AgentSpec

#: the highest salt ``random:N`` takes
MAX_SALT = 2**31 - 1
#: mem slot marking that this round's generator has been salted (random_policy uses mem[1:9])
M_SALTED = MEM_SIZE - 1


@lru_cache(maxsize=None)
def salted_random_policy(salt: int):
    """The compiled ``random:salt`` policy (one per salt, compiled on first use and cached on
    disk: numba keys the cache by the captured value)."""
    salt = int(salt)
    if not 1 <= salt <= MAX_SALT:
        raise ValueError(f"salt must be from 1 to {MAX_SALT}, got {salt}")

    def policy(st, seat, mem):
        if mem[M_SALTED] == 0:
            mem[0] = derive(mem[0], salt)
            mem[M_SALTED] = 1
        return random_policy(st, seat, mem)

    policy.__doc__ = (f"``random:{salt}``: a uniformly random legal placement or pile move (stops only when none "
                      f"is left), from the seat's random stream salted by {salt}.")
    return nb.njit(POLICY_SIG, cache=True)(policy)


def _with_salt(salt: int) -> AgentSpec:
    """``random:N``: the random agent with its stream salted by N, named ``random-N``."""
    name = f"random-{salt}"
    return AgentSpec(name, f"a uniformly random legal placement or pile move, its random stream salted by {salt} "
                     "(for A/A runs)", policy=salted_random_policy(salt), source=name)


#: the registered agent (entry point ``random``; ``random:N`` salts its random stream)
SPEC = AgentSpec("random", "a uniformly random legal placement or pile move; stops only when none is left",
                 policy=random_policy, source="random", mem_words=1,
                 option=AgentOption("the salt of its random stream (random:1 and random:2 make an A/A pair)",
                                    1, MAX_SALT, _with_salt))
