"""Game records (docs/formats.md): building them from played rounds, writing and
reading JSON Lines, and checking them against the reference engine."""
