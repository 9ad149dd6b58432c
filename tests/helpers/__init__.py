"""Shared test helpers: the differential sweep, hand-built positions, agents that misbehave on purpose."""
