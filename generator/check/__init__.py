"""Rules and lint per app, the PR check against a base, `catalog explain`, and their tables and JSON.

The package's stage in the flow: docs/architecture.md."""
