"""chart: see docs/architecture.md."""
