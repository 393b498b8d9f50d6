"""catalog: typed local-LLM app catalog -> Olares Market Helm charts."""

__version__ = "0.1.0"
