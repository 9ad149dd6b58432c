"""What people look at and play through: text rendering, terminal play, replays and the
PettingZoo environment."""
