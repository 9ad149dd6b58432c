"""Tests of kc_sim.bench."""
