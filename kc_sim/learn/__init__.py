"""Learning with outside libraries: a Gymnasium vector env over the batched core, training
with sb3-contrib's MaskablePPO (``kc-sim train``), trained policies and OpenSpiel's IS-MCTS as
kc-sim agents (``sb3:path/model.zip``, ``openspiel:ismcts``). Torch, sb3 and OpenSpiel are
optional extras, imported only here and only when used."""
