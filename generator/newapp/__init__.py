"""`catalog new`: a model file's header (GGUF, or a Hugging Face repository's config.json) -> a catalog model with
its recorded real shape, and a fit-sized app on it (docs/new-model.md)."""
