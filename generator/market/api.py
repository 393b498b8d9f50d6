"""The Olares Market Source API over HTTP (Starlette, run by uvicorn in `catalog serve`).

Routes, bodies and headers follow the maintainer's worker (github.com/aamsellem/orales-one-market@
6a34b5bb8ff60e5bbbea0ba7a030b9ef8c41bdd9 `src/index.ts`) and what beclab/market's syncer reads
(internal/v2/appinfo/syncerfn: hash, data and detail steps; docs/market-source.md):

    GET  /api/v1/appstore/hash?version=X             {hash, last_updated, version}         ETag, 304
    GET  /api/v1/appstore/info?version=X             {version, hash, last_updated, data, stats}   ETag, 304
    POST /api/v1/applications/info                   {app_ids, version} -> {apps, version[, not_found]}
    GET  /api/v1/applications/{name}/chart?fileName=<name>-<version>.tgz   a released Helm package
    GET  /icons/<name>.png, /health, / (the store page), /plots/<file>.svg

Every device sends its Olares version: `?version=X` on hash and info, `version` in the body of
applications/info (beclab/market@8cfabaae002b92598a86ba410149e9002bb47276 internal/v2/appinfo/syncerfn/
hash_comparison_step.go, data_fetch_step.go, detail_fetch_step.go; the version is the device's own,
internal/v2/appinfo/syncer.go `getVersionForSync`), and the chart URL carries it too (the maintainer's CLAUDE.md
"Olares Market Source API Contract": `chart?fileName={chartName}&version={version}`). Each answer comes from the
build of the format that version installs (publish/market.py `format_for`: olares-v2 up to 1.12.5, olares-v3
from 1.12.6; no version or one that is not a version: the newest format). Package file names are unique
across formats, so the chart route serves the file named whatever the version.

Every answer is prepared when the releases change (`Snapshot`, built by generator/market/server.py); a
request only picks bytes out of the current snapshot and splices the `version` it was asked for. Where the
worker answers with the time of the request (`last_updated`), this server answers with the newest release
date, so the same releases always give the same bytes. Errors are JSON `{"error": ...}` with the worker's
CORS headers: a body that is not JSON or not `{app_ids: [string], version: string}` is a 400.

Why Starlette and not FastAPI: the API is six routes answering prepared bytes; FastAPI would add its own
dependency injection, OpenAPI generation and response validation on top of Starlette (the same ASGI core),
and the one body we read is validated with pydantic directly. Fewer dependencies, nothing generated per
request.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated

from pydantic import BaseModel, ConfigDict, Field, StrictStr, ValidationError

from generator.core import Lazy, Once
from generator.publish import MarketBuild, format_for
from generator.publish import js_ordered

if TYPE_CHECKING:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.types import ASGIApp, Receive, Scope, Send

DEFAULT_VERSION = "1.12.3"  # the worker's default when ?version= is missing (it serves one format to everyone)


def answered_for(asked: str | None) -> str:
    """The `version` an answer echoes: the device's own; without one (missing or empty), the first Olares version of
    the newest format, the one answered (not the worker's 1.12.3, whose format a device would not get)."""
    from generator.chart import PROFILES
    from generator.publish import formats_newest_first, min_olares

    if asked:
        return asked
    return ".".join(str(n) for n in min_olares(PROFILES[formats_newest_first()[0]]))
CORS = {
    "Access-Control-Allow-Origin": "*",
    "Access-Control-Allow-Methods": "GET, POST, OPTIONS",
    "Access-Control-Allow-Headers": "Content-Type, Authorization",
}
# Every answer that is not a package: the browser never guesses a type, runs nothing the page does not ship
# itself, and the page is not framed by another site (docs/security.md "The market source over HTTP").
SAFE_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Content-Security-Policy": ("default-src 'none'; img-src 'self' https: data:; style-src 'unsafe-inline'; "
                                "frame-ancestors 'none'; base-uri 'none'; form-action 'none'"),
    "Referrer-Policy": "no-referrer",
}
JSON_HEADERS = {"Content-Type": "application/json", **CORS, **SAFE_HEADERS}
MAX_BODY = 1 << 20  # bytes of a POST body
MAX_IDS = 1000  # Olares asks in batches of 10
TOPIC = "Featured apps in AI"
TAG_CREATED = "2025-11-07T05:14:01.765Z"  # the worker's constant
TAG_ICON = "https://app.cdn.olares.com/icons/market/sidebar/neurology.svg"


def _compact(data: object) -> bytes:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def info_data(build: MarketBuild) -> dict[str, object]:
    """`data` and `stats` of /appstore/info as the worker builds them from catalog.json."""
    summaries = build.summaries()
    stamp = build.last_updated
    data = {
        "apps": summaries,
        "recommends": {},
        "pages": {"AI": {"category": "AI", "content": json.dumps(
            [{"type": "Topic", "id": TOPIC}, {"type": "Default Topic", "id": "Newest"}], separators=(",", ":"))}},
        "topics": {},
        "topic_lists": {TOPIC: {"name": TOPIC, "type": "Category", "content": ",".join(summaries),
                                "title": {"en-US": TOPIC, "zh-CN": "AI精选应用"}}},
        "tops": [],
        "latest": list(build.latest),
        "tags": {"AI": {"_id": "ai_custom_source", "name": "AI", "title": {"en-US": "AI", "zh-CN": "AI"},
                        "icon": TAG_ICON, "sort": 7, "source": 0, "updated_at": stamp, "createdAt": TAG_CREATED}},
    }
    stats = {"appstore_data": {"apps": len(summaries), "pages": 1, "recommends": 0, "tags": 1, "topic_lists": 1,
                               "topics": 0}, "last_updated": stamp}
    return {"data": data, "stats": stats}


@dataclass(frozen=True)
class FormatAnswers:
    """Every answer of one manifest format, prepared."""

    build: MarketBuild
    etag: str
    hash_head: bytes  # body = head + json(version) + tail
    hash_tail: bytes
    info_head: bytes
    info_tail: bytes
    details: dict[str, bytes]  # app id -> compact JSON of its detail entry

    @classmethod
    def make(cls, build: MarketBuild) -> FormatAnswers:
        rest = _compact({"hash": build.hash, "last_updated": build.last_updated})
        info = _compact({"hash": build.hash, "last_updated": build.last_updated, **info_data(build)})
        return cls(build=build, etag=f'"{build.hash}"', hash_head=rest[:-1] + b',"version":', hash_tail=b"}",
                   info_head=b'{"version":', info_tail=b"," + info[1:],
                   details={ident: _compact(d) for ident, d in build.details().items()})

    def hash_body(self, version: str) -> bytes:
        return self.hash_head + _compact(version) + self.hash_tail

    def info_body(self, version: str) -> bytes:
        return self.info_head + _compact(version) + self.info_tail

    def details_body(self, ids: list[str], version: str) -> bytes:
        found = js_ordered({i: None for i in ids if i in self.details})  # a JS object: ids in its key order
        missing = [i for i in ids if i not in self.details]
        apps = b",".join(_compact(i) + b":" + self.details[i] for i in found)
        tail = b',"not_found":' + _compact(missing) if missing else b""
        return b'{"apps":{' + apps + b'},"version":' + _compact(version) + tail + b"}"


@dataclass(frozen=True)
class Snapshot:
    """Every answer of one state of the releases, prepared: one `FormatAnswers` per manifest format. The store page
    and its plots are made when first asked for (`store`): the answers to devices never wait for them."""

    formats: dict[str, FormatAnswers]  # by profile, the newest format first
    store: Once[tuple[bytes, Mapping[str, bytes]]]  # the page's HTML and its plots (each drawn on first request)
    problems: tuple[str, ...] = ()  # what is not served, and why (/health is degraded while there is one)
    notes: tuple[str, ...] = ()  # apps a format cannot express (not listed in it by design)
    recorded: frozenset[str] = frozenset()  # package file names releases.yaml records
    icons: dict[str, bytes] = field(default_factory=dict)
    pending: int = 0  # recorded older versions not read from the git history yet (the server's first seconds)
    waiting: frozenset[str] = frozenset()  # formats whose charts are not made yet (the server's first seconds)

    @classmethod
    def make(cls, builds: dict[str, MarketBuild] | MarketBuild,
             store: Callable[[], tuple[bytes, Mapping[str, bytes]]],
             problems: tuple[str, ...] = (), notes: tuple[str, ...] = (),
             recorded: frozenset[str] = frozenset(), pending: int = 0,
             waiting: frozenset[str] = frozenset()) -> Snapshot:
        """`store`: what makes the page's HTML and plots, on the first request for them; `waiting`: the formats
        not made yet (their devices are answered 503 until a later snapshot has them)."""
        if isinstance(builds, MarketBuild):
            builds = {builds.profile or "olares-v3": builds}
        formats = {name: FormatAnswers.make(b) for name, b in builds.items() if name not in waiting}
        newest = next(iter(builds.values()))
        return cls(formats=formats, store=Once(store), problems=problems, notes=notes,
                   recorded=recorded, icons=dict(newest.icons), pending=pending, waiting=waiting)

    @property
    def page(self) -> bytes:
        return self.store()[0]

    @property
    def plots(self) -> Mapping[str, bytes]:
        return self.store()[1]

    @property
    def newest(self) -> FormatAnswers:
        return next(iter(self.formats.values()))

    @property
    def build(self) -> MarketBuild:
        """The newest format's build (what a device without a version gets)."""
        return self.newest.build

    @property
    def charts(self) -> Mapping[str, bytes]:
        return self.newest.build.charts  # every build can download every package

    def pick(self, version: str | None) -> FormatAnswers:
        """The answers for a device of Olares `version` (publish/market.py `format_for`)."""
        return self.formats.get(format_for(version)) or self.newest

    def waits(self, version: str | None) -> str | None:
        """The format a device of Olares `version` installs when it is not made yet (None: it is served)."""
        wanted = format_for(version)
        return wanted if wanted in self.waiting else None


async def made(values: Mapping[str, bytes], key: str) -> bytes:
    """A value of the snapshot, made in a worker thread when it is not made yet (a Helm package or a plot takes
    a fraction of a second: the event loop keeps answering other requests meanwhile)."""
    if not isinstance(values, Lazy) or values.ready(key):
        return values[key]
    from starlette.concurrency import run_in_threadpool

    return await run_in_threadpool(values.__getitem__, key)


async def _stored(snap: Snapshot) -> tuple[bytes, Mapping[str, bytes]]:
    """The snapshot's store page and plots, made in a worker thread on the first request (the fit of every app:
    seconds for a large catalog; the event loop keeps answering devices meanwhile)."""
    if snap.store.ready():
        return snap.store()
    from starlette.concurrency import run_in_threadpool

    return await run_in_threadpool(snap.store)


class AppsInfoRequest(BaseModel):
    """beclab/market internal/v2/types AppsInfoRequest."""

    model_config = ConfigDict(extra="ignore")

    app_ids: Annotated[list[StrictStr], Field(max_length=MAX_IDS)] = Field(default_factory=list)
    version: StrictStr | None = None


def parse_request(body: bytes) -> AppsInfoRequest | str:
    """The request, or what is wrong with it (for a 400)."""
    if not body.strip():
        return 'the body is empty; send a JSON object {"app_ids": ["<id>", ...], "version": "<olares version>"}'
    try:
        return AppsInfoRequest.model_validate_json(body)
    except ValidationError as exc:
        err = exc.errors()[0]
        if err["type"] == "json_invalid":
            return f"the body is not JSON: {err['msg']}"
        if err["type"] == "model_type":
            return 'the body must be a JSON object {"app_ids": ["<id>", ...], "version": "<olares version>"}'
        where = ".".join(str(p) for p in err["loc"])
        return f"{where}: {err['msg']}"


class Holder:
    """The current snapshot, replaced whole by the rebuild thread (one attribute: readers never see half)."""

    def __init__(self, snapshot: Snapshot):
        self.snapshot = snapshot
        self.generation = 1
        self.reload_error: str | None = None
        self.watching = False

    def swap(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot
        self.generation += 1
        self.reload_error = None


def olares_range(profile: str) -> str:
    """The Olares versions that get `profile` ("1.12.3 - 1.12.5", ">= 1.12.6")."""
    from generator.chart import PROFILES
    from generator.publish import formats_newest_first, min_olares

    ordered = formats_newest_first()
    low = ".".join(map(str, min_olares(PROFILES[profile])))
    at = ordered.index(profile)
    if at == 0:
        return f">= {low}"
    high = min_olares(PROFILES[ordered[at - 1]])
    below = (high[0], high[1], high[2] - 1) if high[2] else None
    return f"{low} - {'.'.join(map(str, below))}" if below else f">= {low}, < {'.'.join(map(str, high))}"


def _matches(header: str | None, etag: str) -> bool:
    if not header:
        return False
    tags = [t.strip().removeprefix("W/") for t in header.split(",")]
    return "*" in tags or etag in tags


def chart_refusal(app: str, file_name: str | None, charts: Mapping[str, bytes],
                  recorded: frozenset[str] = frozenset()) -> str | None:
    """Why `fileName` is not served for `app` (None: it is a released package of `app`)."""
    if not file_name:
        return f"pass ?fileName={app}-<version>.tgz"
    if "/" in file_name or "\\" in file_name or ".." in file_name or not file_name.endswith(".tgz"):
        return "fileName is a package name <app>-<version>.tgz, not a path"
    if not file_name.startswith(f"{app}-"):
        return f"{file_name} is not a chart of {app}"
    if file_name in charts:
        return None
    version = file_name.removeprefix(f"{app}-").removesuffix(".tgz")
    if file_name in recorded:
        return (f"{app} {version} is recorded in releases.yaml, but no chart with its recorded content is served "
                "(see /health for why)")
    served = sorted(n.removeprefix(f"{app}-").removesuffix(".tgz") for n in charts if n.startswith(f"{app}-"))
    return (f"{app} {version} is not a released version" +
            (f"; released: {', '.join(served)}" if served else f"; {app} has no released version here"))


class MarketApp:
    """The route handlers over `holder.snapshot`; `make_app` mounts them on Starlette."""

    def __init__(self, holder: Holder, name: str):
        from starlette.responses import Response

        self.holder, self.name, self.Response = holder, name, Response

    def js(self, data: object, status: int = 200, headers: dict[str, str] | None = None) -> Response:
        return self.Response(_compact(data), status, headers={**JSON_HEADERS, **(headers or {})})

    def conditional(self, request: Request, body: bytes, answers: FormatAnswers) -> Response:
        headers = {**JSON_HEADERS, "ETag": answers.etag, "Cache-Control": "no-cache"}
        if _matches(request.headers.get("if-none-match"), answers.etag):
            return self.Response(status_code=304, headers={k: v for k, v in headers.items() if k != "Content-Type"})
        return self.Response(body, headers=headers)

    def starting(self, snap: Snapshot, asked: str | None) -> Response | None:
        """503 with Retry-After while the format a device installs is not made yet (the server's first seconds):
        an empty market, or another format's, would be taken for the store's content."""
        waiting = snap.waits(asked)
        if waiting is None:
            return None
        return self.js({"error": "Starting", "detail": f"the {waiting} charts are still being made; ask again in a "
                        "few seconds"}, 503, {"Retry-After": "5"})

    async def hash(self, request: Request) -> Response:
        asked, snap = request.query_params.get("version"), self.holder.snapshot
        answers = snap.pick(asked)
        return self.starting(snap, asked) or self.conditional(request, answers.hash_body(answered_for(asked)), answers)

    async def info(self, request: Request) -> Response:
        asked, snap = request.query_params.get("version"), self.holder.snapshot
        answers = snap.pick(asked)
        return self.starting(snap, asked) or self.conditional(request, answers.info_body(answered_for(asked)), answers)

    async def details(self, request: Request) -> Response:
        snap = self.holder.snapshot
        length = request.headers.get("content-length")
        too_large = {"error": f"the body is larger than {MAX_BODY} bytes"}
        if length and (not length.isdigit() or int(length) > MAX_BODY):
            return self.js(too_large, 413)
        body = bytearray()
        async for chunk in request.stream():
            body += chunk
            if len(body) > MAX_BODY:
                return self.js(too_large, 413)
        parsed = parse_request(bytes(body))
        if isinstance(parsed, str):
            return self.js({"error": parsed}, 400)
        asked = parsed.version or request.query_params.get("version")  # the body's, as beclab/market sends it
        waiting = self.starting(snap, asked)
        if waiting is not None:
            return waiting
        return self.Response(snap.pick(asked).details_body(parsed.app_ids, answered_for(asked)),
                             headers=JSON_HEADERS)

    async def chart(self, request: Request) -> Response:
        snap = self.holder.snapshot
        charts = snap.charts
        file_name = request.query_params.get("fileName")
        why = chart_refusal(request.path_params["name"], file_name, charts, snap.recorded)
        if why is not None and (snap.pending or snap.waiting) and file_name in snap.recorded:
            return self.js({"error": "Starting", "detail": f"{file_name}: the server is still reading older versions "
                            "from the git history or making the other formats' charts; ask again in a few seconds"},
                           503, {"Retry-After": "5"})
        if why is not None or file_name is None:
            return self.js({"error": "Chart not found", "detail": why}, 404)
        return self.Response(await made(charts, file_name), media_type="application/gzip", headers={
            "Content-Disposition": f'attachment; filename="{file_name}"', "Cache-Control": "public, max-age=86400",
            "Access-Control-Allow-Origin": "*", "X-Content-Type-Options": "nosniff"})

    async def icon(self, request: Request) -> Response:
        data = self.holder.snapshot.icons.get(request.path_params["file"].removesuffix(".png"))
        if data is None:
            return self.js({"error": "Icon not found"}, 404)
        return self.Response(data, media_type="image/png", headers={
            "Cache-Control": "public, max-age=86400", "Access-Control-Allow-Origin": "*", **SAFE_HEADERS})

    async def health(self, request: Request) -> Response:
        holder, snap = self.holder, self.holder.snapshot
        ok = holder.reload_error is None and holder.watching and not snap.problems
        formats = {name: {"apps": len(a.build.entries), "hash": a.build.hash, "olares": olares_range(name)}
                   for name, a in snap.formats.items()}
        status = "degraded" if not ok else "starting" if snap.pending or snap.waiting else "ok"
        return self.js({"name": self.name, "status": status, "apps": len(snap.build.entries),
                        "pending_history": snap.pending, "pending_formats": sorted(snap.waiting),
                        "hash": snap.build.hash, "last_updated": snap.build.last_updated,
                        "generation": holder.generation, "watching": holder.watching,
                        "reload_error": holder.reload_error, "problems": list(snap.problems), "formats": formats,
                        "not_expressible": list(snap.notes)})

    async def page(self, request: Request) -> Response:
        html, _plots = await _stored(self.holder.snapshot)
        return self.Response(html, media_type="text/html; charset=utf-8",
                             headers={"Cache-Control": "no-cache", **SAFE_HEADERS})

    async def plot(self, request: Request) -> Response:
        (_html, plots), name = await _stored(self.holder.snapshot), request.path_params["file"]
        if name not in plots:
            return self.js({"error": "Not Found"}, 404)
        data = await made(plots, name)
        return self.Response(data, media_type="image/svg+xml", headers={"Cache-Control": "no-cache", **SAFE_HEADERS})

    async def not_found(self, request: Request, exc: Exception) -> Response:
        return self.js({"error": "Not Found"}, 404)

    async def not_allowed(self, request: Request, exc: Exception) -> Response:
        return self.js({"error": "Method Not Allowed"}, 405)


class Preflight:
    """OPTIONS on any path: the worker's CORS headers and no body (ASGI middleware)."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        from starlette.responses import Response

        if scope["type"] == "http" and scope["method"] == "OPTIONS":
            await Response(status_code=200, headers=JSON_HEADERS)(scope, receive, send)
            return
        await self.app(scope, receive, send)


def make_app(holder: Holder, *, name: str = "catalog", on_start: Callable[[], None] | None = None) -> Starlette:
    """The ASGI application answering from `holder.snapshot`; `on_start` is called when the server starts (its
    lifespan's start, just before it listens)."""
    import contextlib

    from starlette.applications import Starlette
    from starlette.middleware import Middleware
    from starlette.routing import Route

    api = MarketApp(holder, name)
    routes = [
        Route("/api/v1/appstore/hash", api.hash, methods=["GET"]),
        Route("/api/v1/appstore/info", api.info, methods=["GET"]),
        Route("/api/v1/applications/info", api.details, methods=["POST"]),
        Route("/api/v1/applications/{name}/chart", api.chart, methods=["GET"]),
        Route("/icons/{file}", api.icon, methods=["GET"]),
        Route("/health", api.health, methods=["GET"]),
        Route("/", api.page, methods=["GET"]),
        Route("/plots/{file}", api.plot, methods=["GET"]),
    ]
    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        if on_start is not None:
            on_start()
        yield

    return Starlette(routes=routes, middleware=[Middleware(Preflight)], lifespan=lifespan,
                     exception_handlers={404: api.not_found, 405: api.not_allowed})


__all__ = ["CORS", "DEFAULT_VERSION", "FormatAnswers", "Holder", "MarketApp", "SAFE_HEADERS", "Snapshot",
           "answered_for", "chart_refusal", "info_data", "make_app", "olares_range", "parse_request"]
