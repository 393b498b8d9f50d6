"""`catalog publish` (not implemented yet)."""
