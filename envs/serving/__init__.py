"""Serving environments over the network: the env server (``toolgym serve``), its sessions and
protocol, and the client that makes a served env a local Gymnasium env."""
