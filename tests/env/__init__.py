"""Tests of kc_sim.env."""
