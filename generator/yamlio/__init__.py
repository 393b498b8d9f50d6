"""yamlio: see docs/architecture.md."""
