"""YAML in with line numbers, deterministic YAML out, and the one scalar resolver.

The package's stage in the flow: docs/architecture.md."""
