"""The driver's CUDA: an image whose CUDA toolkit needs more than the device's driver supports is refused by
nvidia-container-cli before the engine starts (docs/devices.md "The driver's CUDA")."""

from __future__ import annotations

from collections.abc import Iterable

from generator.core import Finding
from generator.rules import AppContext, rule
from generator.schema import cuda_tuple

SRC = ("github.com/aamsellem/olares-one-market@e35a9ddabb97440a62af22dfd22dcf23eefc6554 "
       "llamacppqwen38mtpone/OlaresManifest.yaml ('nvidia-container-cli rejects it (image declares cuda>=13.3, Olares "
       "driver 595.84 = CUDA 13.2)'); docs/devices.md \"The driver's CUDA\"")


@rule("CUDA001", "error", "the image's CUDA is at most what the device's driver supports",
      "nvidia-container-cli refuses to start a container whose image declares a newer CUDA than the driver: the app "
      "never starts (the maintainer pinned server-cuda12 images for this on the Olares One)", SRC)
def within_driver(ctx: AppContext) -> Iterable[Finding]:
    stack, device = ctx.resolved.stack, ctx.resolved.device
    if stack.cuda is None or device.driver_cuda is None:
        return
    if cuda_tuple(stack.cuda.version) > cuda_tuple(device.driver_cuda):
        driver = f"driver {device.driver_version} = " if device.driver_version else "driver "
        yield ctx.finding("CUDA001", "error",
                          f"stack {stack.id} ({stack.image}) needs CUDA {stack.cuda.version} "
                          f"({stack.cuda.source.ref}), but {device.name}'s {driver}CUDA {device.driver_cuda}: "
                          "nvidia-container-cli refuses the image",
                          f"pick a stack whose image needs at most CUDA {device.driver_cuda} (e.g. a CUDA 12 build)",
                          "stack")


@rule("CUDA002", "warning", "the stack records the CUDA its image needs, with a source",
      "without it the driver check (CUDA001) cannot run, and the next CUDA bump of an image reaches users unchecked",
      SRC)
def recorded(ctx: AppContext) -> Iterable[Finding]:
    stack = ctx.resolved.stack
    if stack.cuda is None:
        yield ctx.finding("CUDA002", "warning", f"stack {stack.id} records no `cuda:` (the CUDA its image needs)",
                          f"add `cuda: {{version: X.Y, source: {{ref: ..., note: ...}}}}` to catalog/stacks/{stack.id}"
                          ".yaml, read from the image's build recipe (e.g. llama.cpp .devops/cuda.Dockerfile "
                          "CUDA_VERSION at the tag)", "stack")
