"""`catalog smoke` (not implemented yet)."""
