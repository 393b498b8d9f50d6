"""The shared app form (docs/forms.md): what a Router-native shared chart adds to an app's plan, computed here so
that the templates only print and compare values planned in Python.

Olares' spec (beclab/Olares@3b1fb4b4a3bb378c5a9efd9aca2f2c31d4337c1e docs/developer/develop/package/manifest.md):
`options.shared` ("installed in the `<appname>-shared` namespace"; needs `apiVersion: 'v3'` and `onlyAdmin: true`),
`sharedEntrances` ("an internal address provided by a shared application for other applications within the cluster",
e.g. host `sharedentrances-ollama`, port 0, invisible, authLevel internal), `options.LLMGatewaySupported`, `envs`
("injected as .Values.olaresEnv.ENV_NAME", `type` string/int/.../password, `regex`, `editable`, `applyOnChange`).
The same shape as the platform's engine bases (github.com/beclab/apps@83b36160a35727c3c33d85714a5e8382ad48ffcd
llamacppllmbasev3/OlaresManifest.yaml: sharedEntrances host `sharedentrances-api`; templates/llm-init.yaml: Service
`sharedentrances-api` port 80 -> the container) and the second public store's apps
(github.com/coynntis/olares-one-market@cb991c8fe7ae29766d41269cad880f6c452fab7e llamacppqwen36a3bone/
OlaresManifest.yaml: sharedEntrances host `sharedentrances-llamacppqwen36a3bone`; templates/server.yaml: that Service,
port 80 -> 8000; envs LLM_CONTEXT_WINDOW, LLM_MAX_OUTPUT_TOKENS, LLM_API_KEY read as .Values.olaresEnv.*).

The settings, and how each reaches the engine:

- LLM_CONTEXT_WINDOW: the context a request may use. Empty, zero or not a number: the app's own context (the fit's
  default). Above `maximum` (the largest context the fit places within the GPU memory the chart reserves on the app's
  device, at most the model's): `maximum`. The template puts the result in place of the context flag's value
  (`argIndex` in the engine's args), times the slots for llama.cpp, whose `--ctx-size` is the pool of all slots
  (llama.cpp tools/server/README.md `-c, --ctx-size`; `-np, --parallel`).
- LLM_MAX_OUTPUT_TOKENS: at most the context window; reaches the engine where its flag table has a flag for it:
  llama.cpp `--n-predict` ("number of tokens to predict": the length of an answer whose request names none; a
  request's own max_tokens goes past it, measured on llama-server b11434, tests/forms/test_shared_llama_server.py),
  vLLM `--override-generation-config
  {"max_new_tokens": N}` (vLLM docs configuration/engine_args: "If `max_new_tokens` is specified in generation config,
  then it sets a server-wide limit on the number of output tokens for all requests"). SGLang and Lucebox have none:
  the value is the model card's only.
- LLM_API_KEY: a password env; when set, the chart keeps it in the app's Secret and passes `--api-key $(LLM_API_KEY)`
  (Kubernetes expands `$(VAR)` from the container's env, so the key never stands in the Deployment).
- The slot count is explicit: llama.cpp `--parallel`, vLLM `--max-num-seqs` (SGLang's `--max-running-requests` is
  always planned) are added with the value the fit assumed when the app's argv leaves them out.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from generator.catalog import Resolved
from generator.core import InputError, Problem
from generator.core import Data
from generator.engines import Arg, EngineSpec
from generator.engines import family_for
from generator.engines import Knobs

CONTEXT_ENV = "LLM_CONTEXT_WINDOW"
OUTPUT_ENV = "LLM_MAX_OUTPUT_TOKENS"
API_KEY_ENV = "LLM_API_KEY"
SERVICE_PORT = 80  # the shared entrance's Service port (beclab/apps@83b36160 llamacppllmbasev3/templates/llm-init.yaml)
NUMBER_REGEX = "^([1-9][0-9]{0,8})?$"  # empty, or a whole number without a leading zero (Go's ParseInt base 0 reads
#                                        "010" as 8: the template could otherwise read an octal)






@dataclass(frozen=True)
class ContextBound:
    """The context a request may use, as the chart bounds LLM_CONTEXT_WINDOW."""

    default: int  # tokens per request when the setting is empty: the app's own context (per slot)
    maximum: int  # the largest the chart lets through (per slot)
    slots: int  # what the engine's context flag multiplies (llama.cpp's pool of all slots), else 1
    arg_index: int  # where the context flag's value stands in the engine's args
    why: str  # where the maximum comes from (explain)

    def to_data(self) -> dict[str, Data]:
        return {"default": self.default, "maximum": self.maximum, "slots": self.slots, "argIndex": self.arg_index}


@dataclass(frozen=True)
class SharedEngine:
    """What one engine's values carry in the shared form (values.yaml `engine.shared`, `modes.<mode>.shared`)."""

    context: ContextBound
    output_flag: str | None
    output_format: str
    api_key_flag: str | None

    def to_data(self) -> dict[str, Data]:
        out: dict[str, Data] = {"context": self.context.to_data()}
        if self.output_flag:
            out["maxOutput"] = {"flag": self.output_flag, "format": self.output_format}
        if self.api_key_flag:
            out["apiKeyFlag"] = self.api_key_flag
        return out

    def lines(self) -> list[str]:
        """What `catalog explain` says of the shared form's settings: each one's bound and where it comes from."""
        c = self.context
        pool = f" x {c.slots} slots (the engine's context flag is the pool of all slots)" if c.slots > 1 else ""
        out = [f"{CONTEXT_ENV}: empty -> {c.default:,} tokens (the app's own); above {c.maximum:,} -> {c.maximum:,}: "
               f"{c.why}; the engine's args[{c.arg_index}] gets the window{pool}"]
        if self.output_flag:
            kind = ("a default for requests that name no max_tokens (llama-server)" if self.output_flag == "--n-predict"
                    else "a server-wide limit")
            out.append(f"{OUTPUT_ENV}: at most the window; the engine gets {self.output_flag} "
                       f"{self.output_format.replace('%d', 'N')}: {kind}")
        else:
            out.append(f"{OUTPUT_ENV}: at most the window; the engine takes no output setting in its flag "
                       "table (or the app sets its own): the model card's only")
        out.append(f"{API_KEY_ENV}: " + (f"kept in the app's Secret, passed as {self.api_key_flag} $({API_KEY_ENV})"
                                         if self.api_key_flag else "not offered: the engine takes no --api-key"))
        return out

    def apply(self, value: int) -> int:
        """What the template passes the engine for a setting of `value` (0: empty) — the same rule, in Python, for
        `explain` and the tests: empty or not above zero -> the default; above the maximum -> the maximum."""
        window = self.context.default if value <= 0 else min(value, self.context.maximum)
        return window * self.context.slots


def knobs_for(r: Resolved) -> Knobs:
    """How the app's engine family takes the shared form's settings (its `EngineFamily.knobs`)."""
    return family_for(r.stack).knobs


def _flag_index(argv: list[str], names: tuple[str, ...]) -> int | None:
    """The index of the value of the last `names` flag in argv (None: absent)."""
    found = None
    for i, token in enumerate(argv[:-1]):
        if token in names:
            found = i + 1
    return found


def explicit_slots(r: Resolved, spec: EngineSpec, settings: object) -> EngineSpec:
    """`spec` with the slot count written out when its argv leaves it to the engine (the value the fit read)."""
    knobs = knobs_for(r)
    if not knobs.slot_flags or not knobs.slot_setting or _flag_index(spec.argv, knobs.slot_flags) is not None:
        return spec
    value = getattr(settings, knobs.slot_setting).value
    return replace(spec, args=(*spec.args, Arg((knobs.slot_flags[0], str(value)), "shared form: slots explicit")))


def slots_of(r: Resolved, settings: object) -> int:
    knobs = knobs_for(r)
    return int(getattr(settings, knobs.slot_setting).value) if knobs.slot_setting else 1


def context_maximum(r: Resolved, found: int) -> tuple[int, str]:
    """The largest context (per the fit's steps) that fits the GPU memory the chart reserves on the app's device
    (`found`: the fit's `largest_fitting` of the planned app, generator/fit/devices.py); the app's own context when the
    fit finds less (measured beats modeled: the app's value stays, both are said); a `measured:` context_length of the
    app where it has one."""
    cap = r.app.gpu_memory_mib
    measured = next((m for m in r.app.measured if m.field == "context_length" and m.value.isdigit()), None)
    if measured is not None:  # a context measured as the most that works stays the bound (docs/fit.md)
        return int(measured.value), f"measured: {measured.note} ({measured.source})"
    top = r.model.architecture.max_context
    own = r.app.context_length
    if found >= top:
        return top, f"the model's maximum, which the fit places within the chart's {cap:,} MiB on {r.device.name}"
    if found < own:
        return own, (f"the fit finds at most {found:,} tokens within {cap:,} MiB on {r.device.name}, below the app's "
                     f"own {own:,}: the app's value stays (measured beats modeled)")
    return found, (f"the largest context the fit places within the chart's {cap:,} MiB on {r.device.name} (steps of "
                   f"1,024 tokens; the model's maximum is {top:,})")


def plan_engine(r: Resolved, spec: EngineSpec, settings: object, largest: int) -> SharedEngine:
    """The shared-form values of one engine (`spec` already has its slots explicit; `largest`: the largest context the
    fit places on the app's device, `context_maximum`)."""
    knobs = knobs_for(r)
    argv = spec.argv
    index = _flag_index(argv, knobs.context_flags)
    attached = any(t.startswith(tuple(f"{f}=" for f in knobs.context_flags)) for t in argv)
    if index is None or attached or not argv[index].isdigit():
        raise InputError([Problem(r.file, r.line("extra_args") if r.app.extra_args else None, "form",
                                  f"{r.app.name}: the shared form bounds the context through the engine's "
                                  f"{knobs.context_flags[0]} N, which its args do not hold as two words; write it so "
                                  "in extra_args (not --flag=N), or set `form: single` on the app")])
    slots = slots_of(r, settings) if knobs.per_slot_pool else 1
    total = int(argv[index])
    maximum, why = context_maximum(r, largest)
    bound = ContextBound(default=total // slots, maximum=max(maximum, total) // slots, slots=slots, arg_index=index,
                         why=why)
    output = knobs.output_flag
    if output is not None and _flag_index(argv, (output,)) is not None:
        output = None  # the app sets it itself: its value stays, the setting reaches the card only
    return SharedEngine(bound, output, knobs.output_format, knobs.api_key_flag)


__all__ = ["API_KEY_ENV", "CONTEXT_ENV", "NUMBER_REGEX", "OUTPUT_ENV", "SERVICE_PORT", "ContextBound",
           "Knobs", "SharedEngine", "context_maximum", "explicit_slots", "knobs_for", "plan_engine", "slots_of"]
