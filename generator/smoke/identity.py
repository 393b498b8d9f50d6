"""What the server says it is, and whether that is what the chart serves.

A smoke measures whatever answers on the endpoint: a tiny random-weight model under the app's alias answers
as well as the real one. So before any figure counts, the server's own account of itself is read and compared
with the chart:

- `GET /props` (llama.cpp's, ggml-org/llama.cpp@001d906a6d86e2490e394361e7cc6f478b100088
  tools/server/server-context.cpp `get_res_props`: its `default_generation_settings.params` whose `speculative.*`
  keys are the speculative settings);
- `GET /v1/models`: the card of the served name (`id`, `aliases`, `owned_by`, which names the engine);
- `GET /version`;
- and whatever the engine's own endpoints are: each engine module's `SERVER` (generator/engines/interface.py
  `Server`) says how its server is recognised and reads its version, model path and context from these answers.

Each endpoint is optional: a 404 (or any non-200) is "not said", never an error. The comparison with the
chart (`Expected`, from the app's weight file, stack and image tag) gives mismatches — each a failure that
names the field and both values — and the fields that matched, which the ledger keeps (the prune gate needs
"model" among them). The server is not trusted: every value is type-checked, its control characters made
visible, secrets masked and its length capped before it is kept.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import Field

from generator.core.redact import redact
from generator.core import printable
from generator.engines import ENGINES, server_of
from generator.engines import llamacpp
from generator.engines import Said, Server
from generator.schema import Strict
from generator.schema import Engine  # the one list of engine names
from generator.smoke.http import Deadline, Http, SmokeFailure

if TYPE_CHECKING:
    from generator.catalog import Resolved

LLAMACPP_BUILD = llamacpp.BUILD  # what smoke/local.py reads a local llama-server's build number with
VALUE_CAP = 300  # characters kept of one value the server reports
SPEC_CAP = 12  # speculative settings kept
MAX_COUNT = 10**9


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
    """The engine version an upstream image's tag carries, as the engine's `SERVER.version` reads it (llama.cpp
    `server-cuda13-b8740` -> `b8740`, vLLM `v0.19.1-cu130` -> `0.19.1`). A fork's own tag (`0.1.0`, `v1.9.0`)
    versions the fork, not the engine: None (not checked)."""
    if fork != "upstream":
        return None
    return server_of(engine).version(tag)


def _servers() -> list[tuple[str, Server]]:
    return [(engine, server_of(engine)) for engine in ENGINES]


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

    answers = Said(props=props, card=card, version=version)
    params = answers.generation.get("params")
    owned_by = text(card.get("owned_by")) if card else None

    servers = _servers()
    engine: Engine | None = next((name for name, server in servers if owned_by and server.owned_by == owned_by), None)
    if engine is None:
        sniffers = sorted(((name, server) for name, server in servers if server.sniff is not None),
                          key=lambda pair: pair[1].sniff_order)
        engine = next((name for name, server in sniffers if server.sniff and server.sniff(answers)), None)
    reader = server_of(engine) if engine is not None else next(server for _, server in servers if server.default)
    engine_version, model_path, context = reader.read(answers, lambda path: _get(http, path, deadline, said), text)
    spec = tuple(f"{k}={_setting(v)}" for k, v in (params.items() if isinstance(params, dict) else ())
                 if isinstance(k, str) and k.startswith("speculative.") and len(k) <= 64)[:SPEC_CAP]
    spec = tuple(t for t in (text(s) for s in spec) if t is not None)
    return ServedIdentity(engine=engine, engine_version=engine_version, model_id=text(card.get("id")) if card else None,
                          model_path=model_path, context=context, speculative=spec, said_by=tuple(said))


def compare(served: ServedIdentity, expected: Expected) -> Comparison:
    """Mismatches (failures) and matched fields of the served identity against the chart's."""
    out = Comparison()
    if served.engine is None:
        out.unchecked.append("the server does not say which engine it is (no /props, no `owned_by`, no /version)")
    elif served.engine != expected.engine:
        out.mismatches.append(f"engine: served by {server_of(served.engine).label}; the chart runs "
                              f"{server_of(expected.engine).label} ({expected.image})")
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
    if server_of(expected.engine).version(got) == want:
        out.matched.append("engine_version")
    else:
        out.mismatches.append(f"engine version: served {got}; the chart's image {expected.image} carries {want}")


def prompt_set_sha256(prompts: list[str] | tuple[str, ...], max_tokens: int) -> str:
    """`sha256:` of the prompt set a smoke sends (prompts and max_tokens), so two figures can be compared."""
    data = json.dumps({"prompts": list(prompts), "max_tokens": max_tokens}, sort_keys=True, ensure_ascii=False)
    return "sha256:" + hashlib.sha256(data.encode("utf-8")).hexdigest()


def chart_content(resolved: Resolved) -> str:
    """The content hash of the app's chart as the catalog renders it now (generator/versions/state.py)."""
    from generator.chart import render_app
    from generator.versions import content_hash

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

