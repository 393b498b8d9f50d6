"""prune: see docs/architecture.md."""
