"""Tests of kc_sim.play."""
