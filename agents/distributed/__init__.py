"""Rollouts and verification on a Ray cluster: connecting and placing actors, the env-runner
actor, and the vector env and resilient pools built on them."""
