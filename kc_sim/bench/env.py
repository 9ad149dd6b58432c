"""``kc-sim bench --env``: the batched compiled environment (:mod:`kc_sim.env.batch`) against
the PettingZoo AEC environment (:mod:`kc_sim.env.aec`), both stepping uniformly random legal
actions, 2 players, classic rules, every seat a learner.

* ``vector_env_steps_per_s``: ``BatchEnv(1024)``, one ``step(env.sample())`` per loop
  (the sampling counted), env-steps (one per env and call) per CPU-second;
* ``aec_env_steps_per_s``: ``env(players=2)``, ``e.last()``, a random legal action drawn
  from its mask with numpy, ``e.step(a)``; live steps per CPU-second (the steps of agents
  already done, and the resets between rounds, are timed but not counted);
* ``vector_vs_aec``: their ratio.

Both after a warm-up (compiles and caches loaded), timed with ``time.process_time``.
"""

from __future__ import annotations

import time
import warnings

import numpy as np

BATCH = 1024
PLAYERS = 2
RULES = "classic"


def vector_steps_per_s(seconds: float, batch: int = BATCH, players: int = PLAYERS, rules: str = RULES) -> float:
    """Env-steps per CPU-second of ``BatchEnv(batch)`` stepping ``sample()`` actions."""
    from kc_sim.env.batch import BatchEnv

    e = BatchEnv(batch, players=players, rules=rules)
    e.reset(1)
    for _ in range(20):                       # warm-up
        e.step(e.sample())
    calls = 0
    t0 = time.process_time()
    while True:
        for _ in range(50):
            e.step(e.sample())
        calls += 50
        dt = time.process_time() - t0
        if dt >= seconds:
            return calls * batch / dt


def aec_steps_per_s(seconds: float, players: int = PLAYERS, rules: str = RULES) -> float:
    """Live steps per CPU-second of the PettingZoo AEC env stepping random legal actions."""
    from kc_sim.env.aec import env

    rng = np.random.default_rng(1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        e = env(players=players, rules=rules)

        def rounds(budget):
            steps = 0
            t0 = time.process_time()
            seed = 0
            while True:
                e.reset(seed=seed)
                seed += 1
                for agent in e.agent_iter():
                    obs, _, term, trunc, _ = e.last()
                    if term or trunc:
                        e.step(None)
                        continue
                    e.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
                    steps += 1
                dt = time.process_time() - t0
                if dt >= budget:
                    return steps / dt

        rounds(0.2)                           # warm-up
        return rounds(seconds)


def bench_env(seconds: float = 3.0) -> dict:
    """The figures of the module docstring, each measured for ``seconds`` CPU-seconds."""
    vec = vector_steps_per_s(seconds)
    aec = aec_steps_per_s(seconds)
    return {"vector_env_steps_per_s": vec, "aec_env_steps_per_s": aec, "vector_vs_aec": vec / aec,
            "env_batch_size": BATCH}
