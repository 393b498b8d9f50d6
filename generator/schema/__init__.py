"""Pure pydantic models of the catalog (no I/O)."""

from .app import App, Benchmark, Probe, Resources, Speculative
from .calibration import Calibration
from .device import Device
from .genesis import GenesisPatch, GenesisRegistry
from .model import Architecture, AttentionGroup, Drafter, Model, RecurrentGroup, WeightFile
from .stack import Stack

__all__ = [
    "App", "Architecture", "AttentionGroup", "Benchmark", "Calibration", "Device", "Drafter", "GenesisPatch",
    "GenesisRegistry", "Model", "Probe", "RecurrentGroup", "Resources", "Speculative", "Stack",
    "WeightFile",
]
