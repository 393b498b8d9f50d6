"""Flag tables per pinned engine image (data in catalog/flags/) and the check of an argv against them.

The package's stage in the flow: docs/architecture.md."""
