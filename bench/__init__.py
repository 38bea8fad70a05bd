"""The benchmark of agent-invariants: `python -m bench` (see bench/README.md)."""
