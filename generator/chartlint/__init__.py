"""Pieces of `generator.lint`: quantities, Olares-injected values, the Helm engine, Kubernetes schemas,
the rendered-chart view and the Olares chart rules."""
