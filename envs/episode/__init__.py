"""The episode loop every tool shares: the base environment, its text spaces and the reference
cache."""
