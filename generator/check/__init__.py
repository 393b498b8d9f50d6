"""check: see docs/architecture.md."""
