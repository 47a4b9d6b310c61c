"""Scoring scripts against tasks in any domain: one at a time, in resumable batches, and the reward
fuzzer that plays every generic cheat against every family."""
