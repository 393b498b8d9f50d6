"""Measure a running app, check it against its chart, judge it, keep the ledger; `catalog doctor`'s pod reading.

The package's stage in the flow: docs/architecture.md."""

from typing import TYPE_CHECKING  # for the face below (scripts/faces.py)


# The face: written by scripts/faces.py from the imports of other packages (run it; do not edit this part).
__all__ = ["Baseline", "Diagnosis", "LocalForward", "Measurement", "PodObservation", "SmokeFailure", "SmokeOptions",
           "SmokeRecord", "Target", "chart_content", "check_endpoint", "compare_pod", "conclude", "diagnose",
           "find_target", "history", "ledger", "local_server", "measure", "observe", "portforward_connector",
           "redact", "runnable"]

if TYPE_CHECKING:
    from .verdict import Baseline as Baseline
    from .pod import Diagnosis as Diagnosis
    from .kube_forward import LocalForward as LocalForward
    from .run import Measurement as Measurement
    from .pod import PodObservation as PodObservation
    from .http import SmokeFailure as SmokeFailure
    from .run import SmokeOptions as SmokeOptions
    from .ledger import SmokeRecord as SmokeRecord
    from .run import Target as Target
    from .identity import chart_content as chart_content
    from .http import check_endpoint as check_endpoint
    from .pod import compare_pod as compare_pod
    from .verdict import conclude as conclude
    from .pod import diagnose as diagnose
    from .kube_forward import find_target as find_target
    from .ledger import history as history
    from . import ledger as ledger
    from .local import local_server as local_server
    from .run import measure as measure
    from .pod import observe as observe
    from .kube_forward import portforward_connector as portforward_connector
    from .ledger import redact as redact
    from .local import runnable as runnable

_FACE: dict[str, str] = {"Baseline": "verdict", "Diagnosis": "pod", "LocalForward": "kube_forward",
                         "Measurement": "run", "PodObservation": "pod", "SmokeFailure": "http",
                         "SmokeOptions": "run", "SmokeRecord": "ledger", "Target": "run",
                         "chart_content": "identity", "check_endpoint": "http", "compare_pod": "pod",
                         "conclude": "verdict", "diagnose": "pod", "find_target": "kube_forward",
                         "history": "ledger", "ledger": "ledger", "local_server": "local", "measure": "run",
                         "observe": "pod", "portforward_connector": "kube_forward", "redact": "ledger",
                         "runnable": "local"}

if not TYPE_CHECKING:  # PEP 562: a public name is loaded from its submodule on first use
    from generator import face as _face

    __getattr__ = _face(globals(), _FACE)
