"""Envs made of envs: standard numeric spaces for RL libraries, and several tools in one env."""
