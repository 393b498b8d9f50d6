"""Measure a running app, check it against its chart, judge it, keep the ledger; `catalog doctor`'s pod reading.

The package's stage in the flow: docs/architecture.md."""
