"""The action network as data and compiled code: the ``actions`` encoding (:mod:`.features`),
the encodings' versions (:mod:`.encodings`), the forward pass with weights in slots
(:mod:`.policy`), model files as data (:mod:`.model_file`) and the ``kc-sim/action-net``
format with the ``net:`` loader (:mod:`.model`).

It sits below the built-in agents (which may import it: the shipped ``net`` and
``search-net``) and below learning and the environments, which train and observe with it.
Importing this package imports none of its modules.
"""
