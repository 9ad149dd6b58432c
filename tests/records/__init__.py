"""Tests of kc_sim.records."""
