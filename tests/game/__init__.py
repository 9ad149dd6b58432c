"""Tests of kc_sim.game."""
