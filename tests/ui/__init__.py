"""Tests of kc_sim.ui."""
