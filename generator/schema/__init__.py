"""Pure pydantic models of the catalog (no I/O)."""

from typing import TYPE_CHECKING  # for the face below (scripts/faces.py)


# The face: written by scripts/faces.py from the imports of other packages (run it; do not edit this part).
__all__ = ["App", "AppName", "Architecture", "AttentionGroup", "Benchmark", "Calibration", "ChatTemplate",
           "Corrections", "DEFAULT_PROFILE", "Date", "Declared", "Device", "DeviceTarget", "ENGINES", "Engine",
           "EnvName", "FAMILIES", "Family", "Fork", "FormName", "GGML_BLOCKS", "GGML_TYPE_TABLE", "GenesisPatch",
           "GenesisRegistry", "GpuRoom", "Id", "MAX_ITEMS", "Mamba2Group", "Market", "MarketCategory", "Measured",
           "MeasuredGround", "Model", "PipPackage", "ProfileName", "RecurrentGroup", "SM", "SOURCE_LOCALE",
           "SemVer", "Sources", "Stack", "Strict", "SyncFile", "SyncRecord", "WeightFile", "compact", "cuda_tuple",
           "declaration", "declared", "expand", "tensor_bytes"]

if TYPE_CHECKING:
    from .app import App as App
    from .common import AppName as AppName
    from .model import Architecture as Architecture
    from .model import AttentionGroup as AttentionGroup
    from .app import Benchmark as Benchmark
    from .calibration import Calibration as Calibration
    from .model import ChatTemplate as ChatTemplate
    from .upstream import Corrections as Corrections
    from .market import DEFAULT_PROFILE as DEFAULT_PROFILE
    from .common import Date as Date
    from .engines import Declared as Declared
    from .device import Device as Device
    from .app import DeviceTarget as DeviceTarget
    from .engines import ENGINES as ENGINES
    from .engines import Engine as Engine
    from .common import EnvName as EnvName
    from .engines import FAMILIES as FAMILIES
    from .engines import Family as Family
    from .stack import Fork as Fork
    from .market import FormName as FormName
    from .gguf import GGML_BLOCKS as GGML_BLOCKS
    from .gguf import GGML_TYPE_TABLE as GGML_TYPE_TABLE
    from .genesis import GenesisPatch as GenesisPatch
    from .genesis import GenesisRegistry as GenesisRegistry
    from .app import GpuRoom as GpuRoom
    from .common import Id as Id
    from .common import MAX_ITEMS as MAX_ITEMS
    from .model import Mamba2Group as Mamba2Group
    from .market import Market as Market
    from .app import MarketCategory as MarketCategory
    from .measured import Measured as Measured
    from .upstream import MeasuredGround as MeasuredGround
    from .model import Model as Model
    from .app import PipPackage as PipPackage
    from .market import ProfileName as ProfileName
    from .model import RecurrentGroup as RecurrentGroup
    from .device import SM as SM
    from .app import SOURCE_LOCALE as SOURCE_LOCALE
    from .common import SemVer as SemVer
    from .common import Sources as Sources
    from .stack import Stack as Stack
    from .common import Strict as Strict
    from .upstream import SyncFile as SyncFile
    from .upstream import SyncRecord as SyncRecord
    from .model import WeightFile as WeightFile
    from .gguf import compact as compact
    from .device import cuda_tuple as cuda_tuple
    from .engines import declaration as declaration
    from .engines import declared as declared
    from .gguf import expand as expand
    from .gguf import tensor_bytes as tensor_bytes

_FACE: dict[str, str] = {"App": "app", "AppName": "common", "Architecture": "model", "AttentionGroup": "model",
                         "Benchmark": "app", "Calibration": "calibration", "ChatTemplate": "model",
                         "Corrections": "upstream", "DEFAULT_PROFILE": "market", "Date": "common",
                         "Declared": "engines", "Device": "device", "DeviceTarget": "app", "ENGINES": "engines",
                         "Engine": "engines", "EnvName": "common", "FAMILIES": "engines", "Family": "engines",
                         "Fork": "stack", "FormName": "market", "GGML_BLOCKS": "gguf", "GGML_TYPE_TABLE": "gguf",
                         "GenesisPatch": "genesis", "GenesisRegistry": "genesis", "GpuRoom": "app", "Id": "common",
                         "MAX_ITEMS": "common", "Mamba2Group": "model", "Market": "market", "MarketCategory": "app",
                         "Measured": "measured", "MeasuredGround": "upstream", "Model": "model",
                         "PipPackage": "app", "ProfileName": "market", "RecurrentGroup": "model", "SM": "device",
                         "SOURCE_LOCALE": "app", "SemVer": "common", "Sources": "common", "Stack": "stack",
                         "Strict": "common", "SyncFile": "upstream", "SyncRecord": "upstream",
                         "WeightFile": "model", "compact": "gguf", "cuda_tuple": "device", "declaration": "engines",
                         "declared": "engines", "expand": "gguf", "tensor_bytes": "gguf"}

if not TYPE_CHECKING:  # PEP 562: a public name is loaded from its submodule on first use
    from generator import face as _face

    __getattr__ = _face(globals(), _FACE)
