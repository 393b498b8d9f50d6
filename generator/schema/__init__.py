"""Pure pydantic models of the catalog (no I/O)."""

from generator.schema.app import App, Benchmark, Probe, Resources, Speculative
from generator.schema.calibration import Calibration
from generator.schema.device import Device
from generator.schema.genesis import GenesisPatch, GenesisRegistry
from generator.schema.model import Architecture, AttentionGroup, Drafter, Model, RecurrentGroup, WeightFile
from generator.schema.stack import Stack

__all__ = [
    "App", "Architecture", "AttentionGroup", "Benchmark", "Calibration", "Device", "Drafter", "GenesisPatch",
    "GenesisRegistry", "Model", "Probe", "RecurrentGroup", "Resources", "Speculative", "Stack",
    "WeightFile",
]
