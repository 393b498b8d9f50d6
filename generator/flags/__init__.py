"""flags: see docs/architecture.md."""
