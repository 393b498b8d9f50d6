"""Which deprecated apps may go (the gate), removing them, and the market's SUSPEND / REMOVE change.

The package's stage in the flow: docs/architecture.md."""
