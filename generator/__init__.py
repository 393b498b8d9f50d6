"""catalog: typed local-LLM app catalog -> Olares Market Helm charts."""

from __future__ import annotations

from collections.abc import Callable, MutableMapping

__version__ = "0.1.0"


def face(space: MutableMapping[str, object], table: dict[str, str]) -> Callable[[str], object]:
    """The PEP 562 `__getattr__` of a package's face (written by scripts/faces.py: docs/architecture.md, Faces).

    `space` is the package's globals, `table` its public name -> submodule table. A public name is imported from its
    submodule on first use and then kept in the package, so importing a face loads none of its submodules."""
    package = str(space["__name__"])

    def __getattr__(name: str) -> object:
        try:
            module = table[name]
        except KeyError:
            raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
        value: object = __import__(f"{package}.{module}", fromlist=(name,))  # the submodule
        if name != module:
            value = getattr(value, name)
        space[name] = value
        return value

    return __getattr__
