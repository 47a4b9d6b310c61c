"""The bundled multimodal PPO trainer, split as RLlib splits one: the run's config and seed
streams, what it builds (grammar, policy), rollouts and when they are collected, the learner
(PPO, behaviour cloning), checkpoints and logs, evaluation; the policy and what it reads."""
