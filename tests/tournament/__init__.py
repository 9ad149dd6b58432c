"""Tests of kc_sim.tournament."""
