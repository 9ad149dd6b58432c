"""Tests of kc_sim.cli."""
