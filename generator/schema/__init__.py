"""Pure pydantic models of the catalog (no I/O)."""

from generator.schema.app import App, Benchmark, DeviceTarget, GpuRoom, Probe, Resources, Speculative
from generator.schema.calibration import Calibration
from generator.schema.device import Device
from generator.schema.genesis import GenesisPatch, GenesisRegistry
from generator.schema.market import Icons, Market
from generator.schema.model import (Architecture, AttentionGroup, ChatTemplate, Drafter, Mamba2Group, Model,
                                    RecurrentGroup, WeightFile)
from generator.schema.stack import Stack

__all__ = [
    "App", "Architecture", "AttentionGroup", "Benchmark", "Calibration", "ChatTemplate", "Device", "DeviceTarget",
    "Drafter", "GenesisPatch", "GenesisRegistry", "GpuRoom", "Icons", "Mamba2Group", "Market", "Model", "Probe",
    "RecurrentGroup", "Resources", "Speculative", "Stack", "WeightFile",
]
