"""Pinned images: a floating tag (`nightly`, `latest`, `main`, `master` without a digest) fails `check`.

A floating tag is moved by its publisher: the chart that booted yesterday pulls another build today. On
2026-06-14 Docker Hub moved `vllm/vllm-openai:cu129-nightly-x86_64` to a vLLM v0.23 build that no longer took
the chart's `--compilation-config`, and the maintainer's Nemotron-Labs app crash-looped on every fresh install
(github.com/aamsellem/olares-one-market@df48c4f9f9eaeddce9d342d30e6661d58af021f8
nemotronlabselastic30bnvfp4one/OlaresManifest.yaml:50, the v1.0.3 note: "Lesson: never pin to floating nightly
tags in shipped charts"). A tag that also names a commit (`master-ad27757`, `nightly-1acd67a7…`) or an image
given by digest (`@sha256:…`) is pinned.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from generator.core import Finding
from generator.rules import AppContext, rule

FLOATING = frozenset({"nightly", "latest", "main", "master"})
COMMIT = re.compile(r"^(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}$")  # a git commit, short or full


def tag_of(image: str) -> str:
    """The image's tag ('latest' when it names none, as the container runtime reads it)."""
    last = image.rsplit("/", 1)[-1]
    return last.split(":", 1)[1] if ":" in last else "latest"


def floating(image: str) -> str | None:
    """The floating word of the image's tag, or None when the image is pinned."""
    if "@sha256:" in image:
        return None
    words = re.split(r"[-_.]", tag_of(image).split("@", 1)[0])
    if any(COMMIT.match(w) for w in words):
        return None
    return next((w for w in words if w in FLOATING), None)


@rule("IMG001", "error", "the image is pinned: no floating tag (nightly, latest, main, master) without a digest or "
      "a commit in the tag",
      "a floating tag is moved by its publisher: on 2026-06-14 `vllm/vllm-openai:cu129-nightly-x86_64` moved to a "
      "vLLM v0.23 build and the maintainer's Nemotron-Labs chart crash-looped on every fresh install",
      "github.com/aamsellem/olares-one-market@df48c4f9f9eaeddce9d342d30e6661d58af021f8 "
      "nemotronlabselastic30bnvfp4one/OlaresManifest.yaml:50 (v1.0.3)")
def pinned_image(ctx: AppContext) -> Iterable[Finding]:
    image = ctx.engine.image
    word = floating(image)
    if word is None:
        return
    yield ctx.finding("IMG001", "error", f"image {image} (stack {ctx.app.stack}) has the floating tag word "
                      f"{word!r}: its publisher moves it (the 2026-06-14 Nemotron-Labs crash loop)",
                      "pin the stack's image to a release tag, a tag with the build's commit, or an `@sha256:` digest",
                      "stack")
