"""Tests of the whole project: docs, README, cache, the conformance check."""
