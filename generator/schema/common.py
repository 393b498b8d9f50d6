"""Reusable strict field types shared by every catalog kind."""

import datetime as dt
import re
from typing import Annotated

import semver
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints


# Bounds (issue "Nothing lost, nothing leaked, nothing hangs", failure 19): a catalog value ends up in a
# manifest, an argv or a message, so none is unbounded. Each cap is far above any real value and far below
# what would hurt: Kubernetes keeps a whole object under 1.5 MiB (etcd's request limit,
# https://etcd.io/docs/v3.5/dev-guide/limit/), Linux caps one argv string at 128 KiB (MAX_ARG_STRLEN).
MAX_STR = 8192  # any string not capped more tightly below: one argv token, one env value (8 KiB)
MAX_ITEMS = 256  # any list or mapping not capped more tightly (args, env, patches, sources)
MAX_INT = 2**31 - 1  # Kubernetes and Helm read integers as int32/int64; nothing we write needs more
MAX_FLOAT = 1e12


class Strict(BaseModel):
    """Base for every catalog model: strict types, unknown keys rejected, immutable; every string at most
    MAX_STR characters and no float infinite or NaN (a narrower type below caps a field further)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, str_max_length=MAX_STR,
                              allow_inf_nan=False)


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
Name = Annotated[str, StringConstraints(max_length=200)]  # a name, a version, a GPU model, a method
Note = Annotated[str, StringConstraints(max_length=2000)]  # a sentence or two: a reason, a source, a note
SemVer = Annotated[str, AfterValidator(_semver)]
Title = Annotated[str, StringConstraints(min_length=1, max_length=30)]
Text = Annotated[str, StringConstraints(min_length=1, max_length=4000)]
ImageRef = Annotated[
    str,
    StringConstraints(pattern=r"^[a-z0-9][a-z0-9._/-]*[a-z0-9](:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(@sha256:[a-f0-9]{64})?$"),
]
EnvName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,254}$")]
EnvValue = Annotated[str, StringConstraints(max_length=MAX_STR)]
Env = Annotated[dict[EnvName, EnvValue], Field(max_length=MAX_ITEMS)]
Args = Annotated[tuple[Annotated[str, StringConstraints(max_length=MAX_STR)], ...], Field(max_length=MAX_ITEMS)]
Date = dt.date
PositiveInt = Annotated[int, Field(gt=0, le=MAX_INT)]
NonNegInt = Annotated[int, Field(ge=0, le=MAX_INT)]
PositiveFloat = Annotated[float, Field(gt=0, le=MAX_FLOAT)]
# The longest context window a published model offers is 10M tokens (Llama 4 Scout); 16M leaves room.
Tokens = Annotated[int, Field(gt=0, le=2**24)]
# GPU memory in MiB: the largest single accelerator has 288 GB (NVIDIA B300); 1 TiB leaves room.
MiB = Annotated[int, Field(gt=0, le=2**20)]
Port = Annotated[int, Field(ge=1, le=65535)]  # a TCP port
# Layers, heads, head sizes of a transformer: the largest models have ~130 layers and 128 heads.
Count = Annotated[int, Field(gt=0, le=65536)]

HAMI_LIMIT = re.compile(r"^[1-9][0-9]*[kKmMgG]?$")


class Source(Strict):
    """Where an external fact comes from."""

    ref: Annotated[str, StringConstraints(min_length=3, max_length=2000)]
    note: Note | None = None
    date: Date | None = None


Sources = Annotated[tuple[Source, ...], Field(min_length=1, max_length=MAX_ITEMS)]
