"""Lint one rendered chart: the Helm engine, the Kubernetes schemas and Olares' chart rules.

The package's stage in the flow: docs/architecture.md."""
