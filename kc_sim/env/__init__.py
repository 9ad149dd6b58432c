"""Kings in the Corner as an environment for learning agents, and the encodings of what a
seat sees (one concern: a round as an environment).

* :mod:`kc_sim.env.step`: the one step every adapter uses (terminal, illegal action,
  rewards, observation and mask handled once);
* :mod:`kc_sim.env.batch`: ``BatchEnv``, B rounds per compiled call, compiled opponents inside;
* :mod:`kc_sim.env.aec`: the PettingZoo AEC environment (``kings_in_the_corner_v1``);
* :mod:`kc_sim.env.gym_env`: Gymnasium's ``KcVectorEnv`` and ``KcEnv`` over the batched env;
* :mod:`kc_sim.env.openspiel_game`: the pyspiel game;
* encodings: :mod:`kc_sim.env.obs_vector` (int8[143]), :mod:`kc_sim.env.obs_planes` (the
  learnable planes); :mod:`kc_sim.env.spaces` their Gymnasium spaces;
* :mod:`kc_sim.env.versions`: the versioned names and encoding versions models store.

Importing this package imports none of them (PettingZoo, Gymnasium and OpenSpiel are
optional extras)."""
