"""smoke: see docs/architecture.md."""
