"""What the server says it is, and whether that is what the chart serves.

A smoke measures whatever answers on the endpoint: a tiny random-weight model under the app's alias answers
as well as the real one. So before any figure counts, the server's own account of itself is read and compared
with the chart:

- llama.cpp `GET /props` (ggml-org/llama.cpp@001d906a6d86e2490e394361e7cc6f478b100088
  tools/server/server-context.cpp, `get_res_props`): `model_path` (the GGUF the server loaded), `build_info`
  (`b<build>-<commit>`), `default_generation_settings.n_ctx` (the per-slot context) and
  `default_generation_settings.params` whose `speculative.*` keys are the speculative settings;
- `GET /v1/models`: llama.cpp's card (same file, `get_res_model_info`: `id`, `aliases`, `owned_by: llamacpp`,
  `meta.n_ctx`) or vLLM's `ModelCard` (vllm-project/vllm@0052bed36509c7a5a2d8e48265334e40cf2f5a0e
  vllm/entrypoints/openai/protocol.py: `id` = served name, `owned_by: vllm`, `root` = the model the server was
  started with, `max_model_len`);
- vLLM `GET /version` (vllm-project/vllm vllm/entrypoints/openai/api_server.py `show_version`:
  `{"version": VLLM_VERSION}`).

Each endpoint is optional: a 404 (or any non-200) is "not said", never an error. The comparison with the
chart (`Expected`, from the app's weight file, stack and image tag) gives mismatches — each a failure that
names the field and both values — and the fields that matched, which the ledger keeps (the prune gate needs
"model" among them). The server is not trusted: every value is type-checked, its control characters made
visible, secrets masked and its length capped before it is kept.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import Field

from generator.core.redact import redact
from generator.core.terminal import printable
from generator.schema.common import Strict
from generator.engines.sglang import IDENTITY_PATHS
from generator.schema.stack import Engine  # the one list of engine names
from generator.smoke.http import Deadline, Http, SmokeFailure

if TYPE_CHECKING:
    from generator.catalog import Resolved

ENGINE_NAMES: dict[str, str] = {"llamacpp": "llama.cpp", "vllm": "vLLM", "sglang": "SGLang"}
VALUE_CAP = 300  # characters kept of one value the server reports
SPEC_CAP = 12  # speculative settings kept
MAX_COUNT = 10**9
LLAMACPP_BUILD = re.compile(r"(?:^|[-_:])b(\d{3,})(?=$|[-_.])")  # `server-cuda13-b8740`, `b8740-3f7c1d2`
SEMVER = re.compile(r"^v?(\d+\.\d+\.\d+)(?=$|[-+.a-z])")  # `v0.19.1-cu130`, `0.19.1+cu130`


class ServedIdentity(Strict):
    """What the server said about itself (None: it did not say). Kept in the ledger row as observed."""

    engine: Engine | None = None
    engine_version: str | None = None  # llama.cpp `build_info`, vLLM `/version`
    model_id: str | None = None  # the /v1/models card's `id` (the served name)
    model_path: str | None = None  # llama.cpp `model_path`, vLLM card `root`
    context: int | None = Field(default=None, gt=0, le=MAX_COUNT)
    speculative: tuple[str, ...] = ()  # `key=value` of llama.cpp's `speculative.*` generation settings
    said_by: tuple[str, ...] = ()  # the endpoints that answered: /props, /v1/models, /version

    @property
    def model_file(self) -> str | None:
        """The last path component of `model_path` (a GGUF file name on llama.cpp)."""
        return self.model_path.rstrip("/").rsplit("/", 1)[-1] if self.model_path else None


@dataclass(frozen=True)
class Expected:
    """What the chart serves, as the server would report it."""

    engine: Engine
    model_repo: str
    model_file: str | None  # the GGUF file (llama.cpp); None for vLLM (a repository)
    context: int
    engine_version: str | None  # from the image tag, where the tag carries the engine's own version
    image: str

    @classmethod
    def of(cls, resolved: Resolved) -> Expected:
        stack, app = resolved.stack, resolved.app
        weight = resolved.model.weight(app.quantization)
        assert weight is not None, "the catalog resolver checks the app's quantization"
        return cls(engine=stack.engine, model_repo=weight.repo, model_file=weight.file,
                   context=app.context_length, engine_version=engine_version_of(stack.engine, stack.fork,
                                                                                stack.image_tag),
                   image=stack.image)


def engine_version_of(engine: str, fork: str, tag: str) -> str | None:
    """The engine version an upstream image's tag carries: llama.cpp `server-cuda13-b8740` -> `b8740`
    (ggml-org/llama.cpp's image tags), vLLM `v0.19.1-cu130` -> `0.19.1` (vllm/vllm-openai's tags). A fork's
    own tag (`0.1.0`, `v1.9.0`) versions the fork, not the engine: None (not checked)."""
    if fork != "upstream":
        return None
    if engine == "llamacpp":
        match = LLAMACPP_BUILD.search(tag)
        return f"b{match.group(1)}" if match else None
    match = SEMVER.match(tag)
    return match.group(1) if match else None


@dataclass
class Comparison:
    mismatches: list[str] = field(default_factory=list)  # failures, each naming the field and both values
    matched: list[str] = field(default_factory=list)  # fields checked and equal: engine, engine_version, model, context
    unchecked: list[str] = field(default_factory=list)  # notes: what the server did not say


def observe(http: Http, deadline: Deadline, alias: str) -> ServedIdentity:
    """Read /props, /v1/models and /version; each is optional. A transport failure (refused, timed out)
    propagates: the caller decides whether it is an error; a wrong answer is 'not said'."""
    said: list[str] = []

    def text(value: object) -> str | None:
        return _text(value, http.secrets)

    props = _get(http, "/props", deadline, said)
    models = _get(http, "/v1/models", deadline, said)
    version = _get(http, "/version", deadline, said)
    card = _card(models, alias)

    settings = props.get("default_generation_settings") if props else None
    settings = settings if isinstance(settings, dict) else {}
    params = settings.get("params")
    owned_by = text(card.get("owned_by")) if card else None

    engine: Engine | None = None
    if owned_by in ("llamacpp", "vllm", "sglang"):  # SGLang's card: owned_by "sglang" (openai/protocol.py:74)
        engine = "llamacpp" if owned_by == "llamacpp" else "vllm" if owned_by == "vllm" else "sglang"
    elif props is not None and ("build_info" in props or "model_path" in props):
        engine = "llamacpp"
    elif version is not None and isinstance(version.get("version"), str):
        engine = "vllm"

    if engine == "sglang":
        engine_version, model_path, context = _sglang(http, deadline, said, card, text)
    elif engine == "vllm":
        engine_version = text(version.get("version")) if version else None
        model_path = text(card.get("root")) if card else None
        context = _count(card.get("max_model_len")) if card else None
    else:
        engine_version = text(props.get("build_info")) if props else None
        model_path = text(props.get("model_path")) if props else None
        meta = card.get("meta") if card else None
        context = _count(settings.get("n_ctx")) or (_count(meta.get("n_ctx")) if isinstance(meta, dict) else None)
    spec = tuple(f"{k}={_setting(v)}" for k, v in (params.items() if isinstance(params, dict) else ())
                 if isinstance(k, str) and k.startswith("speculative.") and len(k) <= 64)[:SPEC_CAP]
    spec = tuple(t for t in (text(s) for s in spec) if t is not None)
    return ServedIdentity(engine=engine, engine_version=engine_version, model_id=text(card.get("id")) if card else None,
                          model_path=model_path, context=context, speculative=spec, said_by=tuple(said))


def _sglang(http: Http, deadline: Deadline, said: list[str], card: dict[str, Any] | None,
            text: Callable[[object], str | None]) -> tuple[str | None, str | None, int | None]:
    """SGLang's identity endpoints (generator/engines/sglang.py IDENTITY_PATHS): the model path from /model_info,
    the version and the context length (the ServerArgs field) from /server_info; the card's root and
    max_model_len where they do not answer."""
    model_path, server_path = IDENTITY_PATHS
    info = _get(http, model_path, deadline, said)
    server = _get(http, server_path, deadline, said)
    version = text(server.get("version")) if server else None
    path = text(info.get("model_path")) if info else None
    context = _count(server.get("context_length")) if server else None
    if card:
        path = path or text(card.get("root"))
        context = context or _count(card.get("max_model_len"))
    return version, path, context


def compare(served: ServedIdentity, expected: Expected) -> Comparison:
    """Mismatches (failures) and matched fields of the served identity against the chart's."""
    out = Comparison()
    if served.engine is None:
        out.unchecked.append("the server does not say which engine it is (no /props, no `owned_by`, no /version)")
    elif served.engine != expected.engine:
        out.mismatches.append(f"engine: served by {ENGINE_NAMES[served.engine]}; the chart runs "
                              f"{ENGINE_NAMES[expected.engine]} ({expected.image})")
    else:
        out.matched.append("engine")
    _compare_model(served, expected, out)
    if served.context is not None and served.context == expected.context:
        out.matched.append("context")  # a different context is a failure of its own (run.check_model)
    _compare_version(served, expected, out)
    return out


def _compare_model(served: ServedIdentity, expected: Expected, out: Comparison) -> None:
    if expected.model_file is not None:  # llama.cpp: the GGUF file
        got = served.model_file
        if got is None:
            out.unchecked.append("the server does not say which model file it loaded (no /props `model_path`); "
                                 "model not checked")
        elif got != expected.model_file:
            out.mismatches.append(f"model: served {got}; the chart serves {expected.model_file}")
        else:
            out.matched.append("model")
        return
    root = served.model_path  # vLLM: the repository (or a local copy of it, named after it)
    if root is None:
        out.unchecked.append("the server does not say which model it loaded (no `root` on its /v1/models card); "
                             "model not checked")
    elif root.rstrip("/") == expected.model_repo or root.rstrip("/").endswith("/" + expected.model_repo):
        out.matched.append("model")
    else:
        out.mismatches.append(f"model: served {root}; the chart serves {expected.model_repo}")


def _compare_version(served: ServedIdentity, expected: Expected, out: Comparison) -> None:
    want = expected.engine_version
    if want is None or served.engine != expected.engine:
        return
    got = served.engine_version
    if got is None:
        out.unchecked.append(f"the server does not report its version; the image carries {want}, not checked")
        return
    if expected.engine == "llamacpp":
        match = LLAMACPP_BUILD.search(got)
        same = match is not None and f"b{match.group(1)}" == want
    else:
        match = SEMVER.match(got)
        same = match is not None and match.group(1) == want
    if same:
        out.matched.append("engine_version")
    else:
        out.mismatches.append(f"engine version: served {got}; the chart's image {expected.image} carries {want}")


def prompt_set_sha256(prompts: list[str] | tuple[str, ...], max_tokens: int) -> str:
    """`sha256:` of the prompt set a smoke sends (prompts and max_tokens), so two figures can be compared."""
    data = json.dumps({"prompts": list(prompts), "max_tokens": max_tokens}, sort_keys=True, ensure_ascii=False)
    return "sha256:" + hashlib.sha256(data.encode("utf-8")).hexdigest()


def chart_content(resolved: Resolved) -> str:
    """The content hash of the app's chart as the catalog renders it now (generator/versions/state.py)."""
    from generator.chart.pipeline import render_app
    from generator.versions.state import content_hash

    return content_hash(render_app(resolved))


def _get(http: Http, path: str, deadline: Deadline, said: list[str]) -> dict[str, Any] | None:
    """The JSON object at `path`; None when the server does not answer it with one (404, not JSON, ...)."""
    try:
        reply = http.get(path, deadline)
    except SmokeFailure as exc:
        if exc.unreached is not None:
            raise
        return None  # an oversized or malformed answer: not said
    if reply.status != 200:
        return None
    try:
        data = reply.json(f"GET {path}")
    except SmokeFailure:
        return None
    if not isinstance(data, dict):
        return None
    said.append(path)
    return data


def _card(models: dict[str, Any] | None, alias: str) -> dict[str, Any] | None:
    data = models.get("data") if models else None
    cards: list[dict[str, Any]] = [c for c in data if isinstance(c, dict)] if isinstance(data, list) else []
    for card in cards:
        aliases = card.get("aliases")
        names = [card.get("id"), *(aliases if isinstance(aliases, list) else [])]
        if alias in names:
            return card
    return cards[0] if cards else None


def _setting(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value) if isinstance(value, (str, int, float)) else type(value).__name__


def _text(value: object, secrets: list[str] | tuple[str, ...] = ()) -> str | None:
    """A string the server sent, fit to keep (secrets masked, controls visible, capped); None for anything else."""
    if not isinstance(value, str):
        return None
    text = printable(redact(value, secrets)).strip()
    if not text:
        return None
    return text if len(text) <= VALUE_CAP else text[:VALUE_CAP] + "..."


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 < value <= MAX_COUNT else None
