"""The memory budget of an app: the fit, its GPU sizing, the decode-speed roofline and the app on each device.

The package's stage in the flow: docs/architecture.md."""

from typing import TYPE_CHECKING  # for the face below (scripts/faces.py)


# The face: written by scripts/faces.py from the imports of other packages (run it; do not edit this part).
__all__ = ["DevicePlan", "FAR_ABOVE_MIB", "Fit", "Measured", "Reading", "Roofline", "Speeds", "basis_of",
           "calibrate", "device_plan", "device_plans", "judged_on_device", "largest_context", "largest_fitting",
           "on_device", "predict", "reading", "size_gpu", "sized", "speeds", "variant_on", "with_rows"]

if TYPE_CHECKING:
    from .devices import DevicePlan as DevicePlan
    from .sizing import FAR_ABOVE_MIB as FAR_ABOVE_MIB
    from .estimate import Fit as Fit
    from .roofline import Measured as Measured
    from .roofline import Reading as Reading
    from .roofline import Roofline as Roofline
    from .speed import Speeds as Speeds
    from .calibrate import basis_of as basis_of
    from . import calibrate as calibrate
    from .devices import device_plan as device_plan
    from .devices import device_plans as device_plans
    from .devices import judged_on_device as judged_on_device
    from .calibrate import largest_context as largest_context
    from .devices import largest_fitting as largest_fitting
    from .speed import on_device as on_device
    from .speed import predict as predict
    from .roofline import reading as reading
    from .sizing import size_gpu as size_gpu
    from .sizing import sized as sized
    from .speed import speeds as speeds
    from .devices import variant_on as variant_on
    from .calibrate import with_rows as with_rows

_FACE: dict[str, str] = {"DevicePlan": "devices", "FAR_ABOVE_MIB": "sizing", "Fit": "estimate",
                         "Measured": "roofline", "Reading": "roofline", "Roofline": "roofline", "Speeds": "speed",
                         "basis_of": "calibrate", "calibrate": "calibrate", "device_plan": "devices",
                         "device_plans": "devices", "judged_on_device": "devices", "largest_context": "calibrate",
                         "largest_fitting": "devices", "on_device": "speed", "predict": "speed",
                         "reading": "roofline", "size_gpu": "sizing", "sized": "sizing", "speeds": "speed",
                         "variant_on": "devices", "with_rows": "calibrate"}

if not TYPE_CHECKING:  # PEP 562: a public name is loaded from its submodule on first use
    from generator import face as _face

    __getattr__ = _face(globals(), _FACE)
