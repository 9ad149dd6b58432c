"""Judging recorded rounds: each decision against its alternatives, and the luck of the cards (``kc-sim analyse``, docs/analysis.md)."""
