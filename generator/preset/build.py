"""The env values a user sets on one of Olares' engine bases (catalog/bases/) to serve an app of the catalog.

    MODEL_SOURCE    hf://<repo> --include <file>[,hf://<repo> --include <mmproj>] (llama.cpp: the GGUF the app
                    loads, its projector with a comma); hf://<repo> (vLLM, SGLang)
    MODEL_NAME      <repo>:<quant> (llama.cpp `-hf repo:quant`), <repo> (vLLM, SGLang): what the base's wrapper passes
    MODEL_MODE      chat
    MODEL_SUPPORTS  the model card's capabilities (generator/chart/card.py)
    ENGINE_ARGS     the app's planned argv on the device, less what the base's wrapper passes itself and what names a
                    file of our chart, each flag kept only if the base's pinned image accepts it (its flag table)
                    and it survives the wrapper's word-splitting; the context is the fit-sized one, the slots explicit
    <ENGINE>_REQUIRED_GPU_MEMORY  the fit's GPU memory for the app on the device, in Mi

Each value is validated against the base's env (required, regex, options). An app the base cannot serve gets one
reason instead: another engine family, a fork's image, patches or packages the base's image lacks.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from generator.catalog import Resolved
from generator.chart import card_for
from generator.chart.plan import plan
from generator.chart import explicit_slots, knobs_for, slots_of
from generator.core import Data
from generator.core import CatalogError, UsageError
from generator.engines import family_for, family_of
from generator.flags import FlagTable
from generator.preset.bases import Base

# A value that names a path inside our pod (a file our chart fetches or ships): a base fetches only MODEL_SOURCE.
PATH_VALUE = re.compile(r'(^/|"/)')
# the quantization tag of a GGUF file name (`Qwen3.6-35B-A3B-UD-Q3_K_XL.gguf` -> UD-Q3_K_XL): what llama-server's
# `-hf <repo>:<tag>` matches against the repository's files (llama.cpp tools/server/README.md `-hf`)
QUANT_TAG = re.compile(r"[-_.]((?:UD-)?(?:I?Q\d[A-Z0-9_]*|BF16|F16|F32|MXFP4[A-Z0-9_]*))\.gguf$", re.IGNORECASE)
UNSAFE = re.compile(r"[\s*?\[\]'\"\\`$;&|<>()]")  # what the wrapper's `set -- $ENGINE_ARGS` would split or glob


@dataclass(frozen=True)
class Dropped:
    tokens: tuple[str, ...]
    why: str

    def to_data(self) -> dict[str, Data]:
        return {"args": " ".join(self.tokens), "why": self.why}


@dataclass(frozen=True)
class Preset:
    app: str
    base: str
    device: str
    env: tuple[tuple[str, str], ...] = ()
    dropped: tuple[Dropped, ...] = ()
    notes: tuple[str, ...] = ()
    reason: str | None = None  # the base cannot serve the app: why (then env is empty)
    problems: tuple[str, ...] = field(default=())  # a value the base's env refuses (regex, options)

    @property
    def ok(self) -> bool:
        return self.reason is None and not self.problems

    def to_data(self) -> dict[str, Data]:
        return {"app": self.app, "base": self.base, "device": self.device, "ok": self.ok, "reason": self.reason,
                "env": dict(self.env), "dropped": [d.to_data() for d in self.dropped], "notes": list(self.notes),
                "problems": list(self.problems)}


def base_for(r: Resolved) -> str | None:
    """Olares' own engine base for the app's family (its `EngineFamily.olares_base`; None: none)."""
    return family_for(r.stack).olares_base


def _groups(argv: list[str]) -> list[list[str]]:
    """The argv as flag groups (a flag and the values after it); tokens before the first flag stand alone."""
    out: list[list[str]] = []
    for token in argv:
        if token.startswith("-") and not re.match(r"^-\d", token):
            out.append([token])
        elif out and out[-1][0].startswith("-"):
            out[-1].append(token)
        else:
            out.append([token])
    return out


def _word(value: str) -> str | None:
    """`value` as one word the wrapper's `set -- $ENGINE_ARGS` keeps as it is (JSON compacted), or None."""
    if value[:1] == "{":
        try:
            value = json.dumps(json.loads(value), separators=(",", ":"))
        except ValueError:
            return None
        return None if re.search(r"[\s*?\[\]\\`$=]", value) else value
    if UNSAFE.search(value) or "=" in value:
        return None  # split, globbed, or (llama.cpp's wrapper) dropped as a `X=Y` token that is not LLAMA_ARG_*
    return value


def _engine_args(base: Base, table: FlagTable | None, argv: list[str]) -> tuple[list[str], list[Dropped]]:
    kept: list[str] = []
    dropped: list[Dropped] = []
    for group in _groups(argv):
        head = group[0]
        name = head.split("=", 1)[0] if head.startswith("--") else head
        if not head.startswith("-"):
            dropped.append(Dropped(tuple(group), "a positional (the base passes the model itself)"))
            continue
        if name in base.drops:
            continue  # the base's wrapper passes it
        if any(PATH_VALUE.search(v) for v in group[1:]) or PATH_VALUE.search(head.partition("=")[2]):
            dropped.append(Dropped(tuple(group), "names a path of the app's chart; the base fetches only MODEL_SOURCE"))
            continue
        flag = table.lookup(name) if table is not None else None
        if table is not None and flag is None:
            dropped.append(Dropped(tuple(group), f"{base.image} does not take {name} ({table.id})"))
            continue
        if flag is not None and flag.removed is not None:
            dropped.append(Dropped(tuple(group), f"{name} is removed in {table.id if table else base.image}"))
            continue
        values = group[1:] if "=" not in head else [head.split("=", 1)[1], *group[1:]]
        if flag is not None and flag.choices and flag.choices_strict and values:
            parts = values[0].split(flag.list_separator) if flag.list_separator else [values[0]]
            fold = str.lower if flag.case_insensitive else str  # vLLM's `Enum[value.upper()]` validators
            if any(fold(p) not in {fold(c) for c in flag.choices} for p in parts):
                dropped.append(Dropped(tuple(group), f"{values[0]} is not a value {name} takes on {base.image}"))
                continue
        words = [_word(v) for v in values]
        if any(w is None for w in words):
            dropped.append(Dropped(tuple(group), "a value the base's wrapper would split (ENGINE_ARGS is word-split)"))
            continue
        kept += [name, *(w for w in words if w is not None)]
    return kept, dropped


def _refusal(r: Resolved, base: Base) -> str | None:
    stack = r.stack
    if stack.fork != "upstream":  # a fork's own build (Lucebox's dflash_server too): the base runs its own image
        return (f"{r.app.name} runs {stack.id}, a {stack.fork} build; {base.id} runs only its own {base.image}: keep "
                "the app's chart")
    if r.app.genesis_patches or r.app.python_packages:
        what = "Genesis patches" if r.app.genesis_patches else "pip packages"
        return f"{r.app.name} needs {what} that {base.image} lacks: keep the app's chart"
    return None


def build_preset(r: Resolved, base: Base, table: FlagTable | None, device: str | None = None) -> Preset:
    """The preset of `r` (on `device`, default its own) for `base`; UsageError when the base's engine family is not
    the app's."""
    family = str(family_of(r.stack))
    if r.stack.engine != base.engine:  # the stack's engine selects the family (schema/engines.py `Declared`)
        raise UsageError(f"{r.app.name} runs {family}; {base.id} is a {base.engine} base: use --base "
                         f"{family_for(r.stack).olares_base or 'of its family'}")
    on = device or r.device.id
    if device is not None and device != r.device.id:
        from generator.fit import variant_on

        variant = variant_on(r, device)
        if variant is None:
            known = ", ".join([r.device.id, *(t.device.id for t in r.targets)])
            raise UsageError(f"{r.app.name} does not run on device {device!r}; it targets: {known}")
        r = variant
    refusal = _refusal(r, base)
    if refusal is not None:
        return Preset(r.app.name, base.id, on, reason=refusal)
    spec = plan(r)
    planned = spec.resolved
    engine = spec.engine
    settings = spec.settings  # decided once by the plan
    engine = explicit_slots(planned, engine, settings)
    args, dropped = _engine_args(base, table, engine.argv)
    slots = slots_of(planned, settings) if knobs_for(planned).per_slot_pool else 1
    card = card_for(planned, engine, planned.app.context_length // max(1, slots))
    weight = planned.model.weight(planned.app.quantization)
    assert weight is not None  # the catalog resolver checked it
    if family_for(planned.stack).declared.gguf:  # a server of single GGUF files: the file and its tag
        source = f"hf://{weight.repo} --include {weight.file}"
        if planned.app.vision and planned.mmproj is not None:
            source += f",hf://{planned.mmproj.repo} --include {planned.mmproj.file}"
        tag = QUANT_TAG.search(weight.file or "")
        name = f"{weight.repo}:{tag.group(1)}" if tag else weight.repo
    else:
        source = f"hf://{weight.repo}"
        if weight.revision and weight.revision != "main":
            source += f" --revision {weight.revision}"
        name = weight.repo
    gpu = planned.app.gpu_memory_mib
    env = (("MODEL_SOURCE", source), ("MODEL_NAME", name), ("MODEL_MODE", "chat"),
           ("MODEL_SUPPORTS", card.supports_env), ("ENGINE_ARGS", " ".join(args)),
           (base.gpu_memory_env, f"{gpu}Mi"))
    memory = ("sized by the fit" if "gpu_memory_mib" in planned.sized else "as the app states it (measured beats "
              "modeled)")
    notes = [f"context {card.context_window:,} tokens per request (the fit's on {planned.device.name} for "
             f"{planned.stack.image}), {gpu:,} MiB GPU memory {memory}; the base runs {base.image}"]
    if table is None:
        notes.append(f"no flag table for {base.image}: ENGINE_ARGS is not checked")
    elif base.flag_table_note:
        notes.append(base.flag_table_note)
    env_left = sorted(e.name for e in engine.env if e.name not in ("HF_HOME", "MODELS_DIR", "HF_HUB_CACHE")
                      and not e.name.startswith("CUDA_DEVICE_MEMORY_LIMIT"))
    if env_left:
        notes.append(f"env the base does not take: {', '.join(env_left)}")
    return Preset(r.app.name, base.id, on, env=env, dropped=tuple(dropped), notes=tuple(notes),
                  problems=tuple(validate(base, dict(env))))


def page_preset(r: Resolved, root: Path) -> Preset | None:
    """The preset the store page shows beside an app (its family's base, its own device); None where neither the
    store nor the embedded catalog has the base's file."""
    from generator.preset.bases import base_root, bases_dir, flag_table, load_base

    name = base_for(r)
    if name is None:
        return Preset(r.app.name, "-", r.device.id, reason="Olares has no engine base of its family")
    if not (bases_dir(base_root(root, name)) / f"{name}.yaml").is_file():
        return None
    try:
        base = load_base(root, name)
        return build_preset(r, base, flag_table(root, base.flag_table))
    except CatalogError as exc:
        return Preset(r.app.name, name, r.device.id, reason=str(exc))


def validate(base: Base, env: dict[str, str]) -> list[str]:
    """What the base's manifest envs refuse of `env` (required, regex, options); empty when it accepts it."""
    out: list[str] = []
    for spec in base.envs:
        value = env.get(spec.envName)
        if value is None:
            if spec.required and spec.default is None:
                out.append(f"{spec.envName}: required, not set")
            continue
        if spec.required and not value:
            out.append(f"{spec.envName}: required, empty")
        if spec.regex is not None and not re.search(spec.regex, value):
            out.append(f"{spec.envName}: {value!r} does not match {spec.regex}")
        if spec.options:
            allowed = {o.value for o in spec.options}
            parts = value.split(spec.splitter or ",") if spec.multiSelect else [value]
            bad = [p for p in parts if p not in allowed]
            if bad:
                out.append(f"{spec.envName}: {', '.join(bad)} not among {', '.join(sorted(allowed))}")
    return out


__all__ = ["Dropped", "Preset", "base_for", "build_preset", "page_preset", "validate"]
