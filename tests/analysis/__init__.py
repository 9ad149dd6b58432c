"""Tests of kc_sim.analysis."""
