"""market: the Olares Market Source API (`catalog serve`) and the store page (`catalog site`); see
docs/market-source.md. The files the maintainer's worker reads are built by generator/publish/market.py, and
this stage answers from that same build."""

from typing import TYPE_CHECKING  # for the face below (scripts/faces.py)


# The face: written by scripts/faces.py from the imports of other packages (run it; do not edit this part).
__all__ = ["GuardedHttpToolsProtocol", "KEEP_ALIVE_S", "LedgerReader", "PackageCache", "SmokePoint", "Sources",
           "build", "check_site_folder", "connection_cap", "make_app", "olares_range", "start", "write_site"]

if TYPE_CHECKING:
    from .limits import GuardedHttpToolsProtocol as GuardedHttpToolsProtocol
    from .limits import KEEP_ALIVE_S as KEEP_ALIVE_S
    from .history import LedgerReader as LedgerReader
    from .source import PackageCache as PackageCache
    from .history import SmokePoint as SmokePoint
    from .server import Sources as Sources
    from .server import build as build
    from .page import check_site_folder as check_site_folder
    from .limits import connection_cap as connection_cap
    from .api import make_app as make_app
    from .api import olares_range as olares_range
    from .server import start as start
    from .page import write_site as write_site

_FACE: dict[str, str] = {"GuardedHttpToolsProtocol": "limits", "KEEP_ALIVE_S": "limits", "LedgerReader": "history",
                         "PackageCache": "source", "SmokePoint": "history", "Sources": "server", "build": "server",
                         "check_site_folder": "page", "connection_cap": "limits", "make_app": "api",
                         "olares_range": "api", "start": "server", "write_site": "page"}

if not TYPE_CHECKING:  # PEP 562: a public name is loaded from its submodule on first use
    from generator import face as _face

    __getattr__ = _face(globals(), _FACE)
