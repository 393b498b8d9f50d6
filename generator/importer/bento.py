"""Which device a chart's `metadata.bento.hero` figure is for, in the chart's own words.

The hero is a store's headline figure for the app (`value`), with a label in the store's own words (`label`). A store
may show a figure measured elsewhere: the second public store's Nemotron diffusion chart
(github.com/coynntis/olares-one-market@cb991c8f llamacppnemotrondiffusion14b1/OlaresManifest.yaml:21-23, `hero:
{value: 50 t/s, label: self-spec ref RTX 3090}`) shows a reference figure on an RTX 3090; its upgrade notes (line 62)
say "Reference benchmarks (RTX 3090 24 GB, spiritbuun) ... Olares One (RTX 5090M sm_120) bench TBD". A catalog
benchmark is a figure of the app on its own device (generator/schema/app.py `Benchmark` names no device; the roofline
and the speed model hold it against the app's device), so the import keeps a figure only when its label names that
device or none, and says which.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from generator.schema import Device

# Words that name a GPU or a machine in a label, for a device the catalog does not hold: NVIDIA's GeForce, Quadro,
# Tesla and data-centre names (RTX 3090, A100, H200, L40S, B200, GB10), DGX and Jetson machines, AMD's Radeon and
# Instinct (RX 7900, MI300X), Apple's M-series chips (M3 Max). A model's geometry (`35B-A3B`, `A22B`) is no match.
_GPU = re.compile(r"(?<![\w-])(?:(?:NVIDIA\s+)?(?:GeForce\s+)?(?:RTX|GTX|Quadro|Tesla|TITAN)\s*[A-Z]?\d{2,4}\w*"
                  r"|[ABHL]\d{2,3}S?|GB\d{2,3}|DGX(?:\s+\w+)?|Jetson(?:\s+\w+)?|Radeon(?:\s+\w+)?|RX\s*\d{3,4}\w*"
                  r"|MI\d{3}X?|M[1-5]\s+(?:Pro|Max|Ultra))(?![\w-])", re.IGNORECASE)
_VENDOR = re.compile(r"^(?:NVIDIA\s+)?(?:GeForce\s+)?", re.IGNORECASE)


@dataclass(frozen=True)
class Named:
    """A device a hero label names: the label's own words, and the catalog's device (None: not a catalog device)."""

    words: str
    device: Device | None


def _pattern(text: str) -> re.Pattern[str]:
    words = [re.escape(w) for w in text.split()]
    return re.compile(r"(?<![\w-])" + r"\s*".join(words) + r"(?![\w-])", re.IGNORECASE)


def _spellings(device: Device) -> list[str]:
    """How a label may name the catalog's device: its name, its id, its GPU without the vendor's words
    (`NVIDIA GeForce RTX 4090` -> `RTX 4090`) and without a parenthesised remark (`RTX 5090 Mobile (GDDR7)`)."""
    gpu = re.sub(r"\s*\(.*?\)", "", device.gpu).strip()
    return [s for s in dict.fromkeys((device.name, device.id, device.gpu, gpu, _VENDOR.sub("", gpu))) if s]


def named_device(label: str, devices: Iterable[Device], own: Device | None = None) -> Named | None:
    """The device `label` names (the longest spelling found; where several devices answer to it, the app's own
    first, else the first by id), a GPU name of no catalog device, or None when the label names none."""
    hits: list[tuple[int, int, str, Device]] = []
    for device in sorted(devices, key=lambda d: d.id):
        for spelling in _spellings(device):
            found = _pattern(spelling).search(label)
            if found:
                hits.append((-len(found.group(0)), 0 if own is not None and device.id == own.id else 1,
                             found.group(0), device))
    if hits:
        _, _, words, device = min(hits, key=lambda h: (h[0], h[1]))
        return Named(words, device)
    other = _GPU.search(label)
    return Named(other.group(0), None) if other else None


__all__ = ["Named", "named_device"]
