"""Content hash and release state, releases.yaml, what changed, bump, the changelog and charts at a git base.

The package's stage in the flow: docs/architecture.md."""

from typing import TYPE_CHECKING  # for the face below (scripts/faces.py)


# The face: written by scripts/faces.py from the imports of other packages (run it; do not edit this part).
__all__ = ["BumpRun", "GitCharts", "INTRO", "NEW_FILE", "Outcome", "Release", "Releases", "SECTION", "Variant",
           "apply", "assess_catalog", "bump_for_suspend", "chart_version", "check_message", "content_hash",
           "current", "load_releases", "parse_version", "record_current", "releases_path", "today",
           "variant_version", "variants", "version_problems"]

if TYPE_CHECKING:
    from .bump import BumpRun as BumpRun
    from .gitbase import GitCharts as GitCharts
    from .changelog import INTRO as INTRO
    from .changelog import NEW_FILE as NEW_FILE
    from .bump import Outcome as Outcome
    from .releases import Release as Release
    from .releases import Releases as Releases
    from .changelog import SECTION as SECTION
    from .formats import Variant as Variant
    from .bump import apply as apply
    from .bump import assess_catalog as assess_catalog
    from .bump import bump_for_suspend as bump_for_suspend
    from .gitbase import chart_version as chart_version
    from .bump import check_message as check_message
    from .state import content_hash as content_hash
    from .bump import current as current
    from .releases import load_releases as load_releases
    from .state import parse_version as parse_version
    from .bump import record_current as record_current
    from .releases import releases_path as releases_path
    from .bump import today as today
    from .formats import variant_version as variant_version
    from .formats import variants as variants
    from .gitbase import version_problems as version_problems

_FACE: dict[str, str] = {"BumpRun": "bump", "GitCharts": "gitbase", "INTRO": "changelog", "NEW_FILE": "changelog",
                         "Outcome": "bump", "Release": "releases", "Releases": "releases", "SECTION": "changelog",
                         "Variant": "formats", "apply": "bump", "assess_catalog": "bump",
                         "bump_for_suspend": "bump", "chart_version": "gitbase", "check_message": "bump",
                         "content_hash": "state", "current": "bump", "load_releases": "releases",
                         "parse_version": "state", "record_current": "bump", "releases_path": "releases",
                         "today": "bump", "variant_version": "formats", "variants": "formats",
                         "version_problems": "gitbase"}

if not TYPE_CHECKING:  # PEP 562: a public name is loaded from its submodule on first use
    from generator import face as _face

    __getattr__ = _face(globals(), _FACE)
