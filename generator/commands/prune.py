"""`catalog prune` (not implemented yet)."""
