"""Tests of the built-in agents (agents/)."""
