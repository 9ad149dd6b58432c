"""Learning agents: ``kc-sim train`` (:mod:`kc_sim.learn.recipe`: behaviour cloning then PPO of an
action-scoring network, acting in compiled code; :mod:`kc_sim.learn.train`: sb3-contrib's
MaskablePPO), trained models as kc-sim agents (``net:path/model.zip``, a compiled policy,
:mod:`kc_sim.net.model`; ``sb3:path/model.zip``) and OpenSpiel's IS-MCTS
(``openspiel:ismcts``). torch and sb3 are optional extras (``train``), imported only in this
package and only when training; a trained model plays with numba or NumPy alone."""
