"""lint: see docs/architecture.md."""
