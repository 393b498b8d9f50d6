"""fit: see docs/architecture.md."""
