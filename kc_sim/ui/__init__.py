"""What people look at and play through: text rendering, terminal play and replays.
(The environments for learning agents are in :mod:`kc_sim.env`.)"""
