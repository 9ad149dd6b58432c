"""Learning with outside libraries: training with sb3-contrib's MaskablePPO (``kc-sim train``)
over the Gymnasium env of :mod:`kc_sim.env.gym_env`, trained policies and OpenSpiel's IS-MCTS
as kc-sim agents (``sb3:path/model.zip``, ``openspiel:ismcts``). torch and sb3 are optional
extras (``train``), imported only in this package and only when used; a model written by
``kc-sim train`` plays with NumPy alone."""
