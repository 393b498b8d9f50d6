"""Content hash and release state, releases.yaml, what changed, bump, the changelog and charts at a git base.

The package's stage in the flow: docs/architecture.md."""
