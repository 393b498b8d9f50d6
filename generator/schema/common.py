"""Reusable strict field types shared by every catalog kind."""

from __future__ import annotations

import datetime as dt
import re
from typing import Annotated

import semver
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints


class Strict(BaseModel):
    """Base for every catalog model: strict types, unknown keys rejected, immutable."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


def _semver(value: str) -> str:
    try:
        parsed = semver.Version.parse(value)
    except ValueError as exc:
        raise ValueError(f"{value!r} is not a semantic version X.Y.Z") from exc
    if parsed.prerelease or parsed.build:
        raise ValueError(f"{value!r}: Olares PR titles take a plain X.Y.Z version, no pre-release")
    return value


# Folder names GitBot refuses (beclab/Olares framework/oac/internal/chartfolder/folder.go isReservedWord).
RESERVED_APP_NAMES = ("user", "system", "space", "default", "os", "kubesphere", "kube", "kubekey", "kubernetes",
                      "gpu", "tapr", "bfl", "bytetrade", "project", "pod")


def _not_reserved(value: str) -> str:
    if value.lower() in RESERVED_APP_NAMES:
        raise ValueError(f"{value!r} is reserved by Olares (GitBot refuses it as a folder name); choose another name")
    return value


AppName = Annotated[
    str,
    StringConstraints(pattern=r"^[a-z][a-z0-9]{0,29}$"),
    AfterValidator(_not_reserved),
]
"""Olares app/folder name: lowercase letters and digits, starts with a letter, <= 30 chars, not reserved."""

Id = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9._-]{0,62}$")]
SemVer = Annotated[str, AfterValidator(_semver)]
Title = Annotated[str, StringConstraints(min_length=1, max_length=30)]
Text = Annotated[str, StringConstraints(min_length=1, max_length=4000)]
ImageRef = Annotated[
    str,
    StringConstraints(pattern=r"^[a-z0-9][a-z0-9._/-]*[a-z0-9](:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(@sha256:[a-f0-9]{64})?$"),
]
EnvName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")]
Date = dt.date
PositiveInt = Annotated[int, Field(gt=0)]
NonNegInt = Annotated[int, Field(ge=0)]
PositiveFloat = Annotated[float, Field(gt=0)]

HAMI_LIMIT = re.compile(r"^[1-9][0-9]*[kKmMgG]?$")


class Source(Strict):
    """Where an external fact comes from."""

    ref: Annotated[str, StringConstraints(min_length=3)]
    note: str | None = None
    date: Date | None = None


Sources = Annotated[tuple[Source, ...], Field(min_length=1)]
