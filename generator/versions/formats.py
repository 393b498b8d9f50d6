"""An app version in the other manifest formats: the same catalog rendered with every profile it does not use.

A market source answers each Olares device in the format it installs (docs/market-source.md "One catalog, two
formats"): `olares-v2` (0.10.0) up to Olares 1.12.5, `olares-v3` (0.12.0) from 1.12.6. The catalog's own profile
(catalog/market.yaml) is what `catalog render` writes to charts/ and what `releases.yaml` `content` hashes; each
other profile is a *variant* of the same app version:

- rendered from the same resolved app with `plan(r, profile=...)` (generator/chart/plan.py), so every value is
  the one the catalog gives, only written in the other format;
- packaged under its own chart version `X.Y.Z-<apiVersion>` (`1.0.6-v2`), a SemVer pre-release of the app
  version: the two packages of one version never share a file name (`<app>-1.0.6.tgz`, `<app>-1.0.6-v2.tgz`),
  and a device's chart cache cannot take one for the other (the maintainer moves the version with the format
  for that reason: github.com/aamsellem/olares-one-market@59296d35fa0e86b4ee099332ac4937eb9e0f0f1c
  scripts/migrate-manifests-v3.js, "so the new v3 archive cannot be mistaken for the cached v2 archive");
- recorded in releases.yaml beside `content`, as `formats: {<profile>: sha256:...}` (generator/versions/
  releases.py): `content_hash` leaves the chart version out, so the hash of `1.0.6-v2` is the hash of the
  variant rendered at `1.0.6`, and a variant whose rendering changes needs a new version like any chart.

A profile that cannot express the app (the planner or the renderer refuses it with a CatalogError) has no
variant: the app is not listed for devices of that format.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from generator.catalog import Resolved
from generator.chart.plan import plan
from generator.chart import PROFILES, Profile
from generator.chart.render import render
from generator.chart import Tree
from generator.core import CatalogError
from generator.versions.state import content_hash


@dataclass(frozen=True)
class Variant:
    """One app version rendered in a profile other than the catalog's."""

    profile: str
    version: str  # the package's chart version, X.Y.Z-<apiVersion>
    tree: Tree
    content: str  # content_hash(tree): what releases.yaml `formats.<profile>` records


def variant_version(version: str, profile: Profile) -> str:
    """The chart version of `version` written in `profile` when that is not the catalog's own profile."""
    return f"{version}-{profile.api_version}"


def other_profiles(r: Resolved) -> list[Profile]:
    """The profiles the app is not rendered with in charts/, by name."""
    return [p for name, p in sorted(PROFILES.items()) if name != r.market.profile]


def variants(r: Resolved) -> tuple[dict[str, Variant], dict[str, str]]:
    """({profile: variant}, {profile: why it cannot be expressed}) of the app at its catalog version."""
    made: dict[str, Variant] = {}
    refused: dict[str, str] = {}
    for profile in other_profiles(r):
        version = variant_version(r.app.version, profile)
        tagged = dataclasses.replace(r, app=r.app.model_copy(update={"version": version}))
        try:
            tree = render(plan(tagged, profile=profile))
        except CatalogError as exc:
            refused[profile.name] = str(exc)
            continue
        made[profile.name] = Variant(profile.name, version, tree, content_hash(tree))
    return made, refused


__all__ = ["Variant", "other_profiles", "variant_version", "variants"]
