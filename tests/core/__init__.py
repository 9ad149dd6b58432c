"""Tests of kc_sim.core."""
