"""Rules and lint per app, the PR check against a base, `catalog explain`, and their tables and JSON.

The package's stage in the flow: docs/architecture.md."""

from typing import TYPE_CHECKING  # for the face below (scripts/faces.py)


# The face: written by scripts/faces.py from the imports of other packages (run it; do not edit this part).
__all__ = ["annotation", "app_on_device", "card_json", "card_plan", "check_all", "check_changed", "check_json",
           "explain_data", "explain_json", "print_card", "print_check", "print_devices", "print_explain",
           "print_speeds", "speed_data"]

if TYPE_CHECKING:
    from .pr import annotation as annotation
    from .explain import app_on_device as app_on_device
    from .report import card_json as card_json
    from .explain import card_plan as card_plan
    from .run import check_all as check_all
    from .pr import check_changed as check_changed
    from .report import check_json as check_json
    from .explain import explain_data as explain_data
    from .report import explain_json as explain_json
    from .report import print_card as print_card
    from .report import print_check as print_check
    from .report import print_devices as print_devices
    from .report import print_explain as print_explain
    from .report import print_speeds as print_speeds
    from .explain import speed_data as speed_data

_FACE: dict[str, str] = {"annotation": "pr", "app_on_device": "explain", "card_json": "report",
                         "card_plan": "explain", "check_all": "run", "check_changed": "pr", "check_json": "report",
                         "explain_data": "explain", "explain_json": "report", "print_card": "report",
                         "print_check": "report", "print_devices": "report", "print_explain": "report",
                         "print_speeds": "report", "speed_data": "explain"}

if not TYPE_CHECKING:  # PEP 562: a public name is loaded from its submodule on first use
    from generator import face as _face

    __getattr__ = _face(globals(), _FACE)
