"""`catalog check` (not implemented yet)."""
