"""Measure a running app the way the maintainer does (docs/domain.md#crash-rules, "How the maintainer measures").

Against the app's OpenAI-compatible endpoint: wait for readiness (`/health`, 503 = still loading;
`/v1/models` when there is no `/health`), check the served model name and context length, then run
N streamed chat completions of ~800 tokens. Per run: time to first token, decode tokens/s after the
first token, end-to-end tokens/s (generated tokens / wall seconds, the maintainer's figure) and the
speculative acceptance. The first run is cold; the app's figure is the mean over the warm runs.
Every call is bounded (generator/smoke/http.py). Judging against a baseline is smoke_verdict.py.

The server is not trusted: an answer of the wrong shape (`{"choices": 5}`, `aliases: 5`, a number too
large for a float, JSON nested 200 000 deep, bytes that are not UTF-8) is a failure naming what was
wrong, never a traceback; every message is redacted (generator/core/redact.py), its control characters
made visible (generator/core/terminal.py) and its length capped before it is kept.
"""

from __future__ import annotations

import json
import re
import statistics
import time
from dataclasses import dataclass, field
from typing import Any, TypeGuard

from generator.core import Data
from generator.core.redact import redact
from generator.core import printable
from generator.engines import server_of
from generator.smoke.content import problems as content_problems
from generator.smoke.http import METRICS_CAP, Deadline, Http, SmokeFailure, Unreached, parse_json
from generator.smoke.identity import Expected, ServedIdentity, compare, observe
from generator.smoke.metrics import SpecCounts, llamacpp_counts, vllm_counts

DEFAULT_PROMPT = ("Explain in detail, step by step, how a hash table works: hashing, collisions, chaining "
                  "versus open addressing, resizing, and the cost of each operation. Give examples.")
PROBE_S = 10.0  # one readiness probe
POLL_S = 0.5  # between readiness probes
WAIT_LINE_S = 5.0  # between two "waiting for ..." lines on stderr (a terminal's live line moves at every probe)
METRICS_S = 10.0  # one /metrics scrape
MAX_COUNT = 10**9  # a token count or context length above this is not a real server's
MESSAGE_CAP = 500  # characters kept of one failure or note
# The long request (docs/smoke.md "The long request"): a prompt that fills most of the served context, as the
# maintainer measures ("ZERO CUDA OOM at FULL 262K context"), because a HAMi cap a little too tight boots, answers
# short requests, then aborts the server at the first long one (a cuBLAS handle or a new pool chunk past the cap):
# the client sees a closed connection, no HTTP error.
LONG_FILL = 0.85  # of the served context; the rest is the chat template, the answer and the filler's estimate error
LONG_WORD = " data"  # one token per repetition in the BPE vocabularies of the catalog's models (Qwen, Gemma, Llama)
LONG_MAX_TOKENS = 16


@dataclass(frozen=True)
class Target:
    """What a smoke needs to know about the app it measures."""

    app: str
    model_alias: str
    context_length: int
    engine: str  # the stack's engine (generator/schema/engines.py)
    speculative: str | None  # the configured method, None when off
    chart_version: str
    image: str
    prompt: str = DEFAULT_PROMPT
    expect: str | None = None
    expected: Expected | None = None  # what the chart serves; None: the served identity is recorded, not compared
    hami_cap: str | None = None  # the in-container cap, `CUDA_DEVICE_MEMORY_LIMIT_0=<MiB>m`, named by the long request

    @classmethod
    def of(cls, resolved: Any) -> Target:
        from generator.fit import sized

        app, stack = resolved.app, resolved.stack
        probe = app.probe
        mib = sized(resolved).app.gpu_memory_mib
        return cls(app=app.name, model_alias=app.model_alias, context_length=app.context_length,
                   engine=stack.engine, speculative=app.speculative.method if app.speculative else None,
                   chart_version=app.version, image=stack.image,
                   prompt=probe.prompt if probe else DEFAULT_PROMPT, expect=probe.expect if probe else None,
                   expected=Expected.of(resolved),
                   hami_cap=f"CUDA_DEVICE_MEMORY_LIMIT_0={mib}m" if mib is not None else None)

    @property
    def prompts(self) -> tuple[str, ...]:
        """The prompt set every run sends (one prompt today)."""
        return (self.prompt,)


@dataclass(frozen=True)
class SmokeOptions:
    runs: int = 3
    max_tokens: int = 800
    timeout_s: float = 600.0
    expect: str | None = None  # overrides the app's probe.expect
    wait_boot: bool = False  # the server is starting: a refused connection is waited out, not an error at once
    long_request: bool = False  # after the runs, one request that fills most of the served context (LONG_FILL)


@dataclass
class Run:
    cold: bool
    ttft_s: float | None
    completion_tokens: int
    tokens_per_s: float | None  # decode rate after the first token
    e2e_tokens_per_s: float | None  # completion tokens / wall seconds of the request
    spec: SpecCounts | None = None
    text: str = ""
    pieces: list[str] = field(default_factory=list)
    timings_seen: bool = False

    @property
    def acceptance(self) -> float | None:
        return self.spec.acceptance if self.spec else None


@dataclass
class Measurement:
    target: Target
    endpoint: str
    runs: list[Run] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    served_context: int | None = None
    identity: ServedIdentity | None = None  # what the server said it is
    matched: list[str] = field(default_factory=list)  # identity fields equal to the chart's
    error: str | None = None  # nothing could be measured: refused, unreachable, timed out before the first token
    foreign: bool = False  # the endpoint answered, but not as an LLM server: not the app (never a ledger row)

    @property
    def warm(self) -> list[Run]:
        return self.runs[1:] if len(self.runs) > 1 else self.runs

    @property
    def tokens_per_s(self) -> float | None:
        values = [r.e2e_tokens_per_s for r in self.warm if r.e2e_tokens_per_s]
        return statistics.fmean(values) if values else None

    @property
    def decode_tokens_per_s(self) -> float | None:
        values = [r.tokens_per_s for r in self.warm if r.tokens_per_s]
        return statistics.fmean(values) if values else None

    @property
    def ttft_s(self) -> float | None:
        values = [r.ttft_s for r in self.warm if r.ttft_s is not None]
        return statistics.fmean(values) if values else None

    @property
    def spec(self) -> SpecCounts | None:
        counts = [r.spec for r in self.warm if r.spec is not None]
        if not counts:
            return None
        return SpecCounts(sum(c.drafted for c in counts), sum(c.accepted for c in counts))

    @property
    def acceptance(self) -> float | None:
        spec = self.spec
        return spec.acceptance if spec else None


def measure(target: Target, endpoint: str, options: SmokeOptions, *, progress: Any = None,
            waiting: Any = None) -> Measurement:
    """Run the whole smoke; every problem ends up in `failures` (or `error`), never as an exception.

    `error` (not a failure) when nothing could be measured: a connection error (refused, DNS, reset) or a
    timeout before the server's first token, with no failure found before it, or an endpoint that is not an LLM
    server (`foreign`). A server that answered once and then stopped answering (a crash under load) fails.
    `progress(text)`: the live line of a terminal, at every step; `waiting(text)`: a line for stderr, every
    WAIT_LINE_S while the server is not ready (the URL, what answered, the time waited of the budget)."""
    say = progress or (lambda message: None)
    result = Measurement(target=target, endpoint=endpoint)
    with Http(endpoint) as http:
        try:
            say("waiting for the server to be ready")
            wait_ready(http, Deadline.after(options.timeout_s), wait_boot=options.wait_boot, progress=say,
                       waiting=waiting, shown=endpoint, budget=options.timeout_s)
            checks = Deadline.after(options.timeout_s)  # identity and model check: one bounded phase
            identify(http, target, checks, result)
            check_model(http, target, checks, result)
            _runs(http, target, options, result, say)
            if options.long_request:
                long_request(http, target, options, result, say)
        except SmokeFailure as exc:
            if exc.unreached == "foreign":  # not the app: whatever was compared before is not about it
                result.error, result.foreign = clean(str(exc), http.secrets), True
                result.failures = []
            elif exc.unreached is not None and not result.runs and not result.failures:
                result.error = clean(str(exc), http.secrets)
            else:
                result.failures.append(str(exc))
        _check_content(result, options.expect if options.expect is not None else target.expect)
        _check_speculation(result)
        result.failures = [clean(text, http.secrets) for text in result.failures]
        result.notes = [clean(text, http.secrets) for text in result.notes]
    return result


def identify(http: Http, target: Target, deadline: Deadline, result: Measurement) -> None:
    """Read what the server says it is (generator/smoke/identity.py) and compare it with the chart."""
    result.identity = observe(http, deadline, target.model_alias)
    if target.expected is None:
        return
    comparison = compare(result.identity, target.expected)
    result.failures += comparison.mismatches
    result.notes += comparison.unchecked
    result.matched = comparison.matched


def clean(text: str, secrets: list[str] | tuple[str, ...] = ()) -> str:
    """A message fit to print and keep: secrets masked, control characters visible, at most MESSAGE_CAP."""
    text = printable(redact(text, secrets))
    return text if len(text) <= MESSAGE_CAP else text[:MESSAGE_CAP] + "..."


NOT_THE_APP = ("not an OpenAI-compatible server root: {what}; check that the URL is the app's own (its host and "
               "port, e.g. http://HOST:8000; a path only when a proxy serves the app under one)")


def wait_ready(http: Http, deadline: Deadline, *, wait_boot: bool = False, progress: Any = None, waiting: Any = None,
               shown: str = "", budget: float | None = None) -> None:
    """Poll `/health` until 200 (503 means loading); use `/v1/models` when `/health` is 404.

    Nothing listening (refused, no such host) ends the wait at the first probe, unless `wait_boot` (the server is
    starting and will listen). While waiting, `progress` gets a line at every probe and `waiting` one every
    WAIT_LINE_S: the URL, what answered, the seconds waited of the budget."""
    path, last = "/health", "no answer yet"
    unreached: Unreached | None = "timeout"  # why the last probe did not get a 200
    start = time.monotonic()
    said_at: float | None = None
    total = budget if budget is not None else deadline.left()
    where = http.redact(shown) or "the endpoint"
    while True:
        try:
            status = http.get(path, deadline, limit=PROBE_S).status
        except SmokeFailure as exc:
            status, last, unreached = None, str(exc), exc.unreached
            if unreached == "connect" and not wait_boot:
                raise SmokeFailure(f"nothing listens at {where} ({last}); check the URL and port, or pass "
                                   "--wait-boot if the app is still starting (smoke then waits up to --timeout)",
                                   unreached="connect") from None
        if status == 200:
            return
        if status == 404 and path == "/health":
            path = "/v1/models"
            continue
        if status == 404:
            raise SmokeFailure(NOT_THE_APP.format(what="GET /health and GET /v1/models answer HTTP 404"),
                               unreached="foreign")
        if status in (401, 403):
            raise SmokeFailure(f"GET {path}: HTTP {status}: the endpoint wants credentials "
                               "(give them in the URL: http://USER:PASSWORD@HOST:PORT)")
        if status is not None:
            last = f"GET {path}: HTTP {status}" + (" (still loading)" if status == 503 else "")
            unreached = "timeout" if status == 503 else None  # loading: nothing to measure yet; 500: broken
        if deadline.left() <= POLL_S:
            raise SmokeFailure(f"not ready before the timeout: {last}", unreached=unreached)
        now = time.monotonic()
        line = f"waiting for {where}: {last} ({now - start:.0f} s of {total:.0f} s)"
        if progress is not None:
            progress(line)
        if waiting is not None and (said_at is None or now - said_at >= WAIT_LINE_S):
            waiting(line)
            said_at = now
        time.sleep(POLL_S)


def check_model(http: Http, target: Target, deadline: Deadline, result: Measurement) -> None:
    """The served name must be listed; the context the server reports must be the app's."""
    reply = http.get("/v1/models", deadline)
    if reply.status == 404:
        raise SmokeFailure(NOT_THE_APP.format(what="GET /v1/models answers HTTP 404"), unreached="foreign")
    if reply.status != 200:
        raise SmokeFailure(f"GET /v1/models: HTTP {reply.status}")
    if reply.body.lstrip()[:1] not in (b"{", b"["):  # an HTML page, plain text, nothing: not an LLM server at all
        raise SmokeFailure(NOT_THE_APP.format(what="GET /v1/models answers 200 with no JSON"), unreached="foreign")
    cards = _cards(reply.json("GET /v1/models"))  # broken JSON of a server that tried: a failure
    for bad in (c for c in cards if c.get("aliases") is not None and not isinstance(c.get("aliases"), list)):
        result.failures.append(f"GET /v1/models: `aliases` of model {_short(str(bad.get('id')), 80)!r} is a "
                               f"{type(bad['aliases']).__name__}, not a list")
    card = next((c for c in cards if target.model_alias in _names(c)), None)
    if card is None:
        names = sorted({n for c in cards for n in _names(c)})
        listed = ", ".join(names[:10]) or "nothing"
        listed += f" and {len(names) - 10} more" if len(names) > 10 else ""
        result.failures.append(f"the served model {target.model_alias!r} is not listed by /v1/models "
                               f"(it lists {listed}); check the served model name / alias")
    result.served_context = served_context(http, card or {}, deadline)
    if result.served_context is None:
        result.notes.append("the server does not report its context length; not checked")
    elif result.served_context != target.context_length:
        result.failures.append(f"the server's context is {result.served_context:,} tokens but the app's "
                               f"context_length is {target.context_length:,}")


def served_context(http: Http, card: dict[str, object], deadline: Deadline) -> int | None:
    """vLLM: `max_model_len` on the model card; llama.cpp: the per-slot `n_ctx` of `/props`, else `meta.n_ctx`."""
    max_model_len = card.get("max_model_len")
    if _count(max_model_len):
        return max_model_len
    reply = http.get("/props", deadline)
    if reply.status == 200:
        props = reply.json("GET /props")
        settings = props.get("default_generation_settings") if isinstance(props, dict) else None
        n_ctx = settings.get("n_ctx") if isinstance(settings, dict) else None
        if _count(n_ctx):
            return n_ctx
    meta = card.get("meta")
    n_ctx = meta.get("n_ctx") if isinstance(meta, dict) else None
    if _count(n_ctx):
        return n_ctx
    return None


def _runs(http: Http, target: Target, options: SmokeOptions, result: Measurement, say: Any) -> None:
    scrape = server_of(target.engine).metrics  # the engines whose counters smoke/metrics.py reads
    for index in range(options.runs):
        say(f"run {index + 1}/{options.runs}" + (" (cold)" if index == 0 else ""))
        before = _scrape(http, target, options, result) if scrape else None
        try:
            run = run_once(http, target, options, cold=index == 0)
        except SmokeFailure as exc:
            raise SmokeFailure(f"run {index + 1}: {exc}", unreached=exc.unreached) from None
        after = _scrape(http, target, options, result) if before is not None else None
        if run.spec is None and before is not None and after is not None:
            run.spec = after - before
        scrape = scrape and before is not None
        result.runs.append(run)


def long_request(http: Http, target: Target, options: SmokeOptions, result: Measurement, say: Any) -> None:
    """One request whose prompt fills LONG_FILL of the served context. A connection closed during it, after the
    server answered the short runs, is the HAMi cap's failure (HAMi-core aborts the server with SIGABRT when a long
    request allocates past the cap) and is reported naming the cap; an HTTP error (a prompt over the context) is a
    note, not the cap."""
    context = result.served_context or target.context_length
    tokens = max(1, int(context * LONG_FILL) - LONG_MAX_TOKENS - 64)
    per_word = _tokens_per_word(http, target, options)
    words = max(1, int(tokens / per_word))
    say(f"long request (~{tokens:,} prompt tokens, {LONG_FILL:.0%} of {context:,})")
    prompt = "Count the words below, then answer with one sentence." + LONG_WORD * words
    payload: dict[str, Data] = {"model": target.model_alias, "messages": [{"role": "user", "content": prompt}],
                                "max_tokens": LONG_MAX_TOKENS, "stream": True}
    stream = _Stream(http.secrets)
    try:
        for at, line in http.stream("/v1/chat/completions", payload, Deadline.after(options.timeout_s)):
            if stream.feed(at, line):
                break
    except SmokeFailure as exc:
        text = str(exc)
        if exc.unreached == "timeout":
            raise SmokeFailure(f"long request (~{tokens:,} prompt tokens): {text}", unreached=None) from None
        if exc.unreached is None and re.search(r": HTTP 4\d\d", text):  # e.g. a prompt over the context
            result.notes.append(f"long request (~{tokens:,} prompt tokens) refused: {text}; the cap was not tested")
            return
        cap = target.hami_cap or "the app's HAMi cap (CUDA_DEVICE_MEMORY_LIMIT_0)"
        raise SmokeFailure(f"long request (~{tokens:,} prompt tokens, {LONG_FILL:.0%} of the {context:,}-token "
                           f"context): the connection closed during it ({text}): the way a too-tight HAMi cap fails, "
                           f"{cap} (HAMi-core aborts the server when a long request allocates a cuBLAS handle or a "
                           "new pool chunk past it); raise gpu_memory_mib or lower the context") from None
    if not stream.done:
        cap = target.hami_cap or "the app's HAMi cap"
        raise SmokeFailure(f"long request (~{tokens:,} prompt tokens): the stream ended without `data: [DONE]`: the "
                           f"connection closed during it, the way a too-tight HAMi cap fails ({cap})")
    result.notes.append(f"long request: ~{tokens:,} prompt tokens ({LONG_FILL:.0%} of the {context:,}-token context) "
                        "answered")


TOKENIZE_SAMPLE = 200  # filler words sent to the server's tokenizer to learn how many tokens one is


def _tokens_per_word(http: Http, target: Target, options: SmokeOptions) -> float:
    """How many tokens the server's tokenizer makes of one LONG_WORD: POST /tokenize, which llama.cpp's server reads
    as `content` (+ `add_special`; exercised against llama-server b11434 in tests/test_smoke_long.py) and vLLM's as
    TokenizeCompletionRequest `prompt` (+ `add_special_tokens`; vllm/entrypoints/openai protocol), both answering
    `tokens`; 1.0 where the server has none (a prompt over the context is then refused with an HTTP error, a note)."""
    sample = LONG_WORD * TOKENIZE_SAMPLE
    payload: dict[str, Data] = {"model": target.model_alias, "content": sample, "prompt": sample,
                                "add_special": False, "add_special_tokens": False}
    try:
        reply = http.post("/tokenize", payload, Deadline.after(min(options.timeout_s, PROBE_S)))
        data = reply.json("POST /tokenize") if reply.status == 200 else None
    except SmokeFailure:
        return 1.0
    found = data.get("tokens") if isinstance(data, dict) else None
    return max(1.0, len(found) / TOKENIZE_SAMPLE) if isinstance(found, list) and found else 1.0


def run_once(http: Http, target: Target, options: SmokeOptions, *, cold: bool) -> Run:
    """One streamed chat completion, timed from the request to `[DONE]`."""
    payload: dict[str, Data] = {"model": target.model_alias, "messages": [{"role": "user", "content": target.prompt}],
               "max_tokens": options.max_tokens, "stream": True, "stream_options": {"include_usage": True}}
    stream = _Stream(http.secrets)
    start = time.monotonic()
    try:
        for at, line in http.stream("/v1/chat/completions", payload, Deadline.after(options.timeout_s)):
            if stream.feed(at, line):
                break
    except SmokeFailure as exc:
        if exc.unreached is not None and stream.first_at is not None:  # it answered, then stopped: a failure
            raise SmokeFailure(str(exc)) from None
        raise
    end = time.monotonic()
    if not stream.done:
        raise SmokeFailure("the stream ended without `data: [DONE]`")
    return stream.run(cold, start, end)


class _Stream:
    """Accumulates the SSE chunks of one completion."""

    def __init__(self, secrets: list[str] | tuple[str, ...] = ()) -> None:
        self.secrets = secrets  # masked in every excerpt of the stream, before it is cut short
        self.pieces: list[str] = []
        self.first_at: float | None = None
        self.last_at: float | None = None
        self.usage_tokens: int | None = None
        self.timings: dict[str, Any] | None = None
        self.done = False

    def feed(self, at: float, line: bytes) -> bool:
        """Take one line; True once the stream is complete."""
        if line.startswith(b"error:"):
            raise SmokeFailure(f"the server streamed an error: {_short(line[6:], secrets=self.secrets)}")
        if not line.startswith(b"data:"):
            return False
        data = line[5:].strip()
        if data == b"[DONE]":
            self.done = True
            return True
        try:
            chunk = json.loads(data)
        except (UnicodeDecodeError, RecursionError):
            parse_json(data, "malformed SSE chunk")  # raises, naming the reason (not UTF-8, nested too deep)
            raise
        except ValueError:
            raise SmokeFailure(f"malformed SSE chunk: {_short(data, secrets=self.secrets)}") from None
        if not isinstance(chunk, dict):
            raise SmokeFailure(f"malformed SSE chunk (not a JSON object): {_short(data, secrets=self.secrets)}")
        self._take(at, chunk)
        return False

    def _take(self, at: float, chunk: dict[str, Any]) -> None:
        if "error" in chunk:
            raise SmokeFailure(f"the server streamed an error: {_short(_dumps(chunk['error']), secrets=self.secrets)}")
        choices = chunk.get("choices")
        if choices is not None and not isinstance(choices, list):
            raise SmokeFailure(f"malformed SSE chunk: `choices` is a {type(choices).__name__}, not a list")
        for choice in choices or []:
            delta = choice.get("delta") if isinstance(choice, dict) else None
            for key in ("reasoning_content", "reasoning", "content"):
                piece = delta.get(key) if isinstance(delta, dict) else None
                if isinstance(piece, str) and piece:
                    self.pieces.append(piece)
                    self.first_at = self.first_at if self.first_at is not None else at
                    self.last_at = at
        usage = chunk.get("usage")
        completion_tokens = usage.get("completion_tokens") if isinstance(usage, dict) else None
        if _count(completion_tokens):
            self.usage_tokens = completion_tokens
        if isinstance(chunk.get("timings"), dict):
            self.timings = chunk["timings"]

    def tokens(self) -> int:
        if self.usage_tokens is not None:
            return self.usage_tokens
        predicted = (self.timings or {}).get("predicted_n")
        return predicted if _count(predicted) else len(self.pieces)

    def run(self, cold: bool, start: float, end: float) -> Run:
        tokens = self.tokens()
        ttft = self.first_at - start if self.first_at is not None else None
        decode = None
        if self.first_at is not None and self.last_at is not None and tokens > 1 and self.last_at > self.first_at:
            decode = (tokens - 1) / (self.last_at - self.first_at)
        e2e = tokens / (end - start) if tokens and end > start else None
        return Run(cold=cold, ttft_s=ttft, completion_tokens=tokens, tokens_per_s=decode, e2e_tokens_per_s=e2e,
                   spec=llamacpp_counts(self.timings), text="".join(self.pieces), pieces=self.pieces,
                   timings_seen=self.timings is not None)


def _scrape(http: Http, target: Target, options: SmokeOptions, result: Measurement) -> SpecCounts | None:
    """vLLM's spec-decode counters now; None (with a note, once) when /metrics cannot give them."""
    try:
        reply = http.get("/metrics", Deadline.after(options.timeout_s), cap=METRICS_CAP, limit=METRICS_S)
        if reply.status != 200:
            raise SmokeFailure(f"GET /metrics: HTTP {reply.status}")
        try:
            counts = vllm_counts(reply.body.decode("utf-8", "replace"), target.model_alias)
        except (ValueError, TypeError, LookupError, AttributeError) as exc:  # prometheus_client's parser, hostile text
            raise SmokeFailure(f"GET /metrics is not Prometheus text ({type(exc).__name__})") from None
        if counts is None:
            raise SmokeFailure("GET /metrics has no vllm:spec_decode_* counters")
        return counts
    except SmokeFailure as exc:
        note = f"acceptance from /metrics unavailable: {exc}"
        if note not in result.notes:
            result.notes.append(note)
        return None


def _check_content(result: Measurement, expect: str | None) -> None:
    for index, run in enumerate(result.runs, 1):
        for problem in content_problems(run.text, run.pieces, expect):
            result.failures.append(f"run {index}: {problem}")


def _check_speculation(result: Measurement) -> None:
    """With speculation configured, the server must show drafts (llama.cpp draft_n / vLLM counters)."""
    method = result.target.speculative
    if method is None or not result.runs:
        return
    spec = result.spec
    if spec is not None and not spec.plausible:
        result.failures.append(f"the server's draft counters are not plausible ({spec.accepted:g} accepted of "
                               f"{spec.drafted:g} drafted)")
    elif spec is not None and spec.drafted <= 0:
        result.failures.append(f"speculative decoding ({method}) is configured but the server drafted no tokens")
    elif spec is None and any(r.timings_seen for r in result.runs):
        result.failures.append(f"speculative decoding ({method}) is configured but the response timings "
                               "carry no draft_n: speculation is off on the server")
    elif spec is None:
        result.notes.append("speculative acceptance not measurable: no timings.draft_n and no vLLM counters")


def _cards(data: Any) -> list[dict[str, Any]]:
    cards = data.get("data") if isinstance(data, dict) else None
    if not isinstance(cards, list):
        raise SmokeFailure(NOT_THE_APP.format(what="GET /v1/models answers JSON with no `data` list of models"),
                           unreached="foreign")
    return [c for c in cards if isinstance(c, dict)]


def _names(card: dict[str, Any]) -> set[str]:
    aliases = card.get("aliases")
    values = [card.get("id"), *(aliases if isinstance(aliases, list) else [])]
    return {n for n in values if isinstance(n, str)}


def _count(value: Any) -> TypeGuard[int]:
    """A positive integer a real server could report (a 400-digit `n_ctx` is not one)."""
    return isinstance(value, int) and not isinstance(value, bool) and 0 < value <= MAX_COUNT


def _dumps(value: Any) -> str:
    try:
        return json.dumps(value)
    except (ValueError, RecursionError):
        return "(unprintable)"


def _short(data: bytes | str, limit: int = 160, secrets: list[str] | tuple[str, ...] = ()) -> str:
    """At most `limit` characters of server text, redacted BEFORE it is cut (a cut secret is not found)."""
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    text = redact(text, secrets).strip()
    return text[:limit] + "..." if len(text) > limit else text
