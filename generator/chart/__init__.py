"""Plan every final value of an app's chart, render its templates and write the charts folder.

The package's stage in the flow: docs/architecture.md."""

from typing import TYPE_CHECKING  # for the face below (scripts/faces.py)


# The face: written by scripts/faces.py from the imports of other packages (run it; do not edit this part).
__all__ = ["CONTAINER", "ChartSpec", "Data", "FIELDS", "GpuMemory", "PROFILES", "Profile", "Tree", "card_for",
           "diff_tree", "ensure_writable", "explicit_slots", "get_profile", "gpu_memory", "key_paths", "knobs_for",
           "manifest_diff", "measured_belt", "read_block", "read_tree", "render_app", "render_apps",
           "rendered_apps", "slots_of", "stale_folders", "whole_cores", "write_charts"]

if TYPE_CHECKING:
    from .plan import CONTAINER as CONTAINER
    from .plan import ChartSpec as ChartSpec
    from .parts import Data as Data
    from .carried import FIELDS as FIELDS
    from .gpumem import GpuMemory as GpuMemory
    from .profiles import PROFILES as PROFILES
    from .profiles import Profile as Profile
    from .writer import Tree as Tree
    from .card import card_for as card_for
    from .writer import diff_tree as diff_tree
    from .writer import ensure_writable as ensure_writable
    from .shared import explicit_slots as explicit_slots
    from .profiles import get_profile as get_profile
    from .gpumem import gpu_memory as gpu_memory
    from .parts import key_paths as key_paths
    from .shared import knobs_for as knobs_for
    from .writer import manifest_diff as manifest_diff
    from .gpumem import measured_belt as measured_belt
    from .carried import read_block as read_block
    from .writer import read_tree as read_tree
    from .pipeline import render_app as render_app
    from .pipeline import render_apps as render_apps
    from .pipeline import rendered_apps as rendered_apps
    from .shared import slots_of as slots_of
    from .writer import stale_folders as stale_folders
    from .plan import whole_cores as whole_cores
    from .writer import write_charts as write_charts

_FACE: dict[str, str] = {"CONTAINER": "plan", "ChartSpec": "plan", "Data": "parts", "FIELDS": "carried",
                         "GpuMemory": "gpumem", "PROFILES": "profiles", "Profile": "profiles", "Tree": "writer",
                         "card_for": "card", "diff_tree": "writer", "ensure_writable": "writer",
                         "explicit_slots": "shared", "get_profile": "profiles", "gpu_memory": "gpumem",
                         "key_paths": "parts", "knobs_for": "shared", "manifest_diff": "writer",
                         "measured_belt": "gpumem", "read_block": "carried", "read_tree": "writer",
                         "render_app": "pipeline", "render_apps": "pipeline", "rendered_apps": "pipeline",
                         "slots_of": "shared", "stale_folders": "writer", "whole_cores": "plan",
                         "write_charts": "writer"}

if not TYPE_CHECKING:  # PEP 562: a public name is loaded from its submodule on first use
    from generator import face as _face

    __getattr__ = _face(globals(), _FACE)
