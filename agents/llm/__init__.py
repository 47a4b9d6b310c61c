"""Language models at toolgym: a chat client, episodes as chats, a scripted endpoint, the
OpenAI-compatible runner, and the doors to TRL (GRPO, SFT data) and Prime Intellect's
``verifiers``."""
