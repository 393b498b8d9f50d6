"""versions: see docs/architecture.md."""
