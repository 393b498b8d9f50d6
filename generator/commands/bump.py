"""`catalog bump` (not implemented yet)."""
