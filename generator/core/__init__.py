"""The error tree, findings, the rule registry, atomic writes, optional imports, text escaping and redaction.

The package's stage in the flow: docs/architecture.md."""
