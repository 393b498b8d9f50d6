"""Plan every final value of an app's chart, render its templates and write the charts folder.

The package's stage in the flow: docs/architecture.md."""
