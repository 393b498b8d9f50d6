"""The one redactor: every string that leaves the process passes through `redact()` first.

Tables, `--json` output, progress lines, error messages and the smoke ledger all use it, so one list of
patterns decides what is never shown. It masks, with `***`:

- the userinfo of a URL, with or without a scheme: `oci://ci:S3CRET@host/x`, `git:http://bot:tok/EN+S3CRET=@host/m.git`,
  `bot:pw@host:5000/x`. A password may hold any character, `/`, `@` and `:` included: the userinfo ends at
  the LAST `@` that is followed by a host (`name`, `name.name`, `[v6]`, with an optional `:port`), so a raw
  password is masked whole rather than split where a strict URL parser would split it (RFC 3986 §3.2.1
  wants those characters percent-encoded; people paste them raw);
- `Authorization:` / `Proxy-Authorization:` header values, and `Bearer <token>` / `Basic <base64 user:pw>`
  wherever they appear (a server that echoes the request headers back in an error body);
- the value of a key that names a secret in JSON, YAML, `key=value` or a query string (`"token": "..."`,
  `access_token=`, `password:`, `client_secret`, `api_key`, `?sig=`, `X-Amz-Signature=` ...);
- tokens in their published formats: GitHub (`ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_`, `github_pat_`,
  https://github.blog/2021-04-05-behind-githubs-new-authentication-token-formats/), Hugging Face (`hf_`,
  https://huggingface.co/docs/hub/security-tokens), GitLab (`glpat-`), OpenAI-style `sk-`, Slack (`xox?-`),
  AWS access key ids (`AKIA...`) and JSON Web Tokens (`eyJ...`);
- (in catalog files, `literal_secret`) a URL carrying a password in its userinfo, refused at its line;
- every secret the caller knows (a token from the environment, a registry password), with its
  URL-encoded and base64 forms (HTTP Basic `user:secret`, `x-access-token:secret`).

Masking errs on the side of hiding: a path holding `@` after a host-like word may be shown as `***@word`.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import re
from collections.abc import Iterable
from functools import cache, lru_cache
from urllib.parse import quote, unquote

MASK = "***"

# A host as it follows userinfo: a name (dotted or not) or a bracketed IPv6 address, an optional port
# (even a malformed one), then the end of the authority (a path, query, fragment, a delimiter of the
# surrounding text, or the end). `@sha256:<hex>` is an OCI digest, not a host.
_HOST = (r"(?!sha(?:256|384|512):)(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_~%-]+(?:\.[A-Za-z0-9_~%-]+)*\.?)"
         r"(?::[^/?#\s'\"<>@)\],;|`]*)?(?=[/?#\s'\"<>)\],;|`]|$)")
# The patterns below serve `redact` and the URL-password test, which a run that loads a clean catalog and
# prints nothing secret never calls: each is compiled on its first use (`_rx`), not at every start.
_rx = cache(re.compile)

_DELIMITERS = r"[\s'\"<>`]+"  # what ends a URL-like token in running text
# a `:` and then an `@` in one token: the last `:` before the first `@` after it has neither between them (linear)
_COLON_AT = r":[^\s'\"<>`:@]*@"
_SCHEME = r"[A-Za-z][A-Za-z0-9+.-]{0,31}://"
_AT_HOST = rf"@(?={_HOST})"
_USER = r"(?<![A-Za-z0-9._~+%:/@-])[A-Za-z0-9._~+%-]+:(?!//)"

_AUTH_HEADER = (
    r"(?i)(\b(?:proxy-)?authorization\b[\"']?\s*[:=]\s*[\"']?)"
    r"(?:(bearer|basic|token|digest|negotiate|ntlm|bot|apikey)\s+)?([^\s\"',;}\]]+)")
_BEARER = r"(?i)\b(bearer)\s+([A-Za-z0-9._~+/=-]{8,})"
_BASIC = r"(?i)\b(basic)\s+([A-Za-z0-9+/]{4,}={0,2})(?![A-Za-z0-9+/=])"

_SECRET_KEY = (r"[\w.-]*(?:token|secret|passw(?:or)?d|passwd|pwd|api[_-]?key|apikey|access[_-]?key|"
               r"private[_-]?key|credentials?|auth|signature)")
_KEY_VALUE = (
    rf"(?i)(?<![\w.-])([\"']?)({_SECRET_KEY})\1(\s*[:=]\s*)"
    r"(\"(?:[^\"\\\n]|\\.)*\"|'[^'\n]*'|(?![{\[])[^\s,;&}\]'\"]+)")
_QUERY = (
    r"(?i)([?&;](?:[\w.-]*(?:token|sig|signature|secret|passw(?:or)?d|pwd|key|code|auth|credential|"
    r"x-amz-[\w-]+|x-goog-[\w-]+))=)[^&#\s'\"<>`]+")
_TOKENS = re.compile(
    r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|hf_[A-Za-z0-9]{20,}|glpat-[A-Za-z0-9_-]{20,}"
    r"|sk-(?:proj-)?[A-Za-z0-9_-]{20,}|xox[abposr]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}"
    r"|eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})")


# ---- literal secrets in files that are committed or published ----------------------------------------------
# A name that holds a secret: an env variable (`HF_TOKEN`, `VLLM_API_KEY`), a flag without its dashes (`--api-key`,
# `--hf-token`: llama-server's and vLLM's own, catalog/flags/llamacpp-b8740.yaml, vllm-nightly.yaml), a JSON key.
# `MAX_TOKENS` or `--tokenizer` are not: the word must end the name.
_SECRET_NAME = re.compile(r"(?i)(?:^|[_-])(?:token|secret|password|passwd|api[_-]?key|access[_-]key|secret[_-]key|"
                          r"private[_-]key|credentials?)$")
# a name that counts tokens rather than holding one (`num_speculative_token`, `MAX_TOKEN`, `n-draft-token`)
_COUNT_NAME = re.compile(r"(?i)(?:^|[_-])(?:num|max|min|n|count|total|limit|per)[_-]")
# a secret in a URL's query (`...resolve/main/x.gguf?token=hf_...`, a pre-signed `X-Amz-Signature=`)
_URL_SECRET = re.compile(r"(?i)[?&](?:access_token|token|api[_-]?key|apikey|key|sig|signature|password|secret|"
                         r"x-amz-signature|x-amz-credential|x-amz-security-token|x-goog-signature)=(?!\*\*\*)[^&#\s]+")
# a substring every match of _TOKENS holds, one per format of its alternation
_TOKEN_MARKS = ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "hf_", "glpat-", "sk-", "xox", "AKIA", "eyJ")
_TOKEN_KIND = (("hf_", "a Hugging Face token"), ("gh", "a GitHub token"), ("github_pat_", "a GitHub token"),
               ("glpat-", "a GitLab token"), ("sk-", "an API key (sk-...)"), ("xox", "a Slack token"),
               ("AKIA", "an AWS access key id"), ("eyJ", "a JSON Web Token"))


@lru_cache(maxsize=4096)
def secret_name(name: str) -> bool:
    """Whether `name` (an env variable, a flag, a key) names a secret: `HF_TOKEN`, `--api-key`, `client_secret`.
    A count of tokens is not one: `--speculative-config.num_speculative_token` (a JSON key under a flag, judged by
    its last part) or `MAX_DRAFT_TOKEN` name a number."""
    last = name.lstrip("-").rsplit(".", 1)[-1]
    return bool(_SECRET_NAME.search(last)) and not _COUNT_NAME.search(last)


def literal_secret(text: str) -> str | None:
    """What secret `text` holds in the open (`a Hugging Face token`, `a secret URL query parameter`), or None:
    a token in one of the published formats the redactor masks, or a secret query parameter of a URL."""
    # Each token format starts with one of _TOKEN_MARKS and a secret query parameter needs `=` after `?` or `&`:
    # substring tests (C speed) skip the two regex scans for the strings that hold neither (nearly all of them).
    if any(map(text.__contains__, _TOKEN_MARKS)):
        found = _TOKENS.search(text)
        if found:
            return next((kind for prefix, kind in _TOKEN_KIND if found.group().startswith(prefix)), "a token")
    if "=" in text and ("?" in text or "&" in text) and _URL_SECRET.search(text):
        return "a secret URL query parameter"
    if "://" in text and "@" in text and _url_password(text):
        return "a password in a URL (`user:password@`)"
    return None


def _url_password(text: str) -> bool:
    """Whether a URL in `text` carries a password in its userinfo (`https://admin:pw@host`): it would be written
    into charts and the store page as it is (issue 40 cause 6). Each token holding `@` is read on its own: the
    same tokens `_tokens` bounds (split in C, not bounded one by one), and the userinfo patterns see no further
    than the token's ends either way (a delimiter is before it, the search stops at its end)."""
    if not _rx(_COLON_AT).search(text):  # no `:` before an `@` in one token: no password (most text, in one search)
        return False
    for token in _rx(_DELIMITERS).split(text):
        at = token.rfind("@")
        if at < 0 or ":" not in token[:at]:  # a password is after a `:` before an `@`: no userinfo patterns needed
            continue
        for first, at in _userinfo_spans(token, 0, len(token)):
            user, sep, password = token[first:at].partition(":")
            if sep and password and password != MASK:
                return True
    return False


def _is_seq(value: object) -> bool:
    return isinstance(value, (list, tuple))


def secrets_in(data: object, loc: tuple[str | int, ...] = ()) -> list[tuple[tuple[str | int, ...], str]]:
    """(where, what) of every literal secret in plain data (a catalog file): any string holding a token or a secret
    URL parameter; a non-empty value of a secret-named key of a mapping (an `env:` entry `HF_TOKEN: hf_...`); the
    value of a secret-named flag in a list (`args: [--api-key, s3cret]`, `--hf-token=...`). Nothing is echoed."""
    named, strings = _suspect(data)
    if not (named or strings):  # nearly every catalog file: one pass, no per-string regex, no locations built
        return []
    return _secrets_at(data, loc, strings)


def _suspect(data: object) -> tuple[bool, bool]:
    """(whether `data` holds a secret-named key over a scalar or a secret-named flag in a list, whether some string
    of it is one `literal_secret` says anything of): where both are False `_secrets_at` finds nothing, where the
    second is False it finds nothing in a string. The strings are joined, each a line: a match of `_TOKENS` or
    `_URL_SECRET` holds no line break, so one search of the joined text finds one exactly where a search of some
    string would; a password in a URL is looked for in each string holding `://` and `@`, as `literal_secret` does.
    A secret-named key may still hold nothing (an empty value); the full scan then decides."""
    strings: list[str] = []
    named = False
    stack = [data]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            strings.append(node)
        elif isinstance(node, dict):
            for key, value in node.items():
                if not named and isinstance(value, (str, int, float)) and not isinstance(value, bool) \
                        and secret_name(str(key)):
                    named = True
                stack.append(value)
        elif _is_seq(node):
            for item in node:  # type: ignore[attr-defined]
                if not named and isinstance(item, str) and item.startswith("-") \
                        and secret_name(item.split("=", 1)[0]):
                    named = True
                stack.append(item)
    text = "\n".join(strings)
    if any(map(text.__contains__, _TOKEN_MARKS)) and _TOKENS.search(text):
        return named, True
    if "=" in text and ("?" in text or "&" in text) and _URL_SECRET.search(text):
        return named, True
    return named, "://" in text and "@" in text and any("://" in s and "@" in s and _url_password(s) for s in strings)


def _secrets_at(data: object, loc: tuple[str | int, ...],
                strings: bool = True) -> list[tuple[tuple[str | int, ...], str]]:
    """The full scan; `strings` False: no string holds a secret of its own (`_suspect`): keys and flags only."""
    found: list[tuple[tuple[str | int, ...], str]] = []
    if isinstance(data, str):
        kind = literal_secret(data) if strings else None
        if kind:
            found.append((loc, kind))
    elif isinstance(data, dict):
        for key, value in data.items():
            here = (*loc, str(key))
            if isinstance(value, (str, int, float)) and not isinstance(value, bool) and secret_name(str(key)) \
                    and str(value).strip() and str(value) != MASK:
                found.append((here, f"a literal value for {key}"))
            else:
                found += _secrets_at(value, here, strings)
    elif _is_seq(data):
        items = list(data)  # type: ignore[call-overload]
        for index, item in enumerate(items):
            here = (*loc, index)
            if isinstance(item, str) and item.startswith("-") and secret_name(item.split("=", 1)[0]):
                flag, eq, value = item.partition("=")
                nxt = items[index + 1] if index + 1 < len(items) else None
                if eq and value.strip():
                    found.append((here, f"a literal value for {flag}"))
                    continue
                if not eq and isinstance(nxt, str) and nxt.strip() and not nxt.startswith("-"):
                    found.append(((*loc, index + 1), f"a literal value for {flag}"))
                    continue
            found += _secrets_at(item, here, strings)
    return found


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """`text` with every credential this module knows how to find masked, and each string of `secrets`
    (pass `secret_forms(...)` of a raw secret to catch its encoded forms too)."""
    for secret in sorted({s for s in secrets if s}, key=len, reverse=True):
        text = text.replace(secret, MASK)
    text = _mask_userinfo(text)
    text = _rx(_AUTH_HEADER).sub(_auth_value, text)
    text = _rx(_BEARER).sub(lambda m: f"{m.group(1)} {MASK}" if m.group(2) != MASK else m.group(0), text)
    text = _rx(_BASIC).sub(_basic_value, text)
    text = _rx(_KEY_VALUE).sub(_key_value, text)
    text = _rx(_QUERY).sub(lambda m: m.group(1) + MASK, text)
    return _TOKENS.sub(MASK, text)


def secret_forms(secrets: Iterable[str], user: str | None = None) -> list[str]:
    """Each secret as it may appear in text: raw, URL-encoded, base64 of `user:secret` and of
    `x-access-token:secret` (GitHub's Basic auth form); longest first so no form is masked by half."""
    forms: set[str] = set()
    for secret in secrets:
        if not secret:
            continue
        forms |= {secret, quote(secret, safe=""), quote(secret), _b64(secret), _b64(f"x-access-token:{secret}")}
        if user:
            forms.add(_b64(f"{user}:{secret}"))
    return sorted(forms, key=len, reverse=True)


def split_userinfo(url: str) -> tuple[str, str | None]:
    """(`url` without its userinfo, the userinfo or None); the userinfo ends at the last `@` before a host.

    `http://bot:tok/EN+S3CRET=@127.0.0.1:8000/v1` -> (`http://127.0.0.1:8000/v1`, `bot:tok/EN+S3CRET=`).
    Without a scheme, only `user:password@host` counts (so `git@github.com:o/r` keeps its user).
    """
    spans = _userinfo_spans(url, 0, len(url))
    if not spans:
        return url, None
    start, end = spans[0]
    return url[:start] + url[end + 1:], url[start:end]


def _mask_userinfo(text: str) -> str:
    """Every userinfo in `text` replaced by MASK (linear time: hostile text can be long)."""
    spans = [span for token in _tokens(text) for span in _userinfo_spans(text, *token)]
    if not spans:
        return text
    out, last = [], 0
    for start, end in spans:
        out += [text[last:start], MASK]
        last = end
    return "".join(out) + text[last:]


def _tokens(text: str) -> list[tuple[int, int]]:
    bounds, pos = [], 0
    for match in _rx(_DELIMITERS).finditer(text):
        if match.start() > pos:
            bounds.append((pos, match.start()))
        pos = match.end()
    if pos < len(text):
        bounds.append((pos, len(text)))
    return [b for b in bounds if "@" in text[b[0]:b[1]]]


def _userinfo_spans(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """(start, index of the `@`) of each userinfo in text[start:end], a token without delimiters.

    After each `scheme://` the userinfo runs to the last `@` before the next scheme that is followed by a
    host; before the first scheme, only `user:password@host` counts."""
    ats = [m.start() for m in _rx(_AT_HOST).finditer(text, start, end)]
    if not ats:
        return []
    schemes = [(m.start(), m.end()) for m in _rx(_SCHEME).finditer(text, start, end)]
    spans = []
    plain_end = schemes[0][0] if schemes else end
    at = _last_before(ats, start, plain_end)
    if at is not None:
        user = next((m for m in _rx(_USER).finditer(text, start, at) if m.end() <= at), None)
        if user is not None:
            spans.append((user.start(), at))
    for index, (_, body) in enumerate(schemes):
        limit = schemes[index + 1][0] if index + 1 < len(schemes) else end
        at = _last_before(ats, body, limit)
        if at is not None and at > body:
            spans.append((body, at))
    return spans


def _last_before(positions: list[int], low: int, high: int) -> int | None:
    index = bisect.bisect_left(positions, high) - 1
    return positions[index] if index >= 0 and positions[index] >= low else None


def credentials(url: str) -> tuple[str, str | None, str | None]:
    """(`url` without userinfo, user, password), both percent-decoded; None where absent."""
    bare, info = split_userinfo(url)
    if info is None:
        return bare, None, None
    user, sep, password = info.partition(":")
    return bare, unquote(user), unquote(password) if sep else None


def safe_url(url: str) -> str:
    """`url` without user or password, and with secret query values masked, for display."""
    return redact(split_userinfo(url)[0])


def _b64(text: str) -> str:
    return base64.b64encode(text.encode("utf-8", "surrogatepass")).decode()


def _auth_value(match: re.Match[str]) -> str:
    scheme = f"{match.group(2)} " if match.group(2) else ""
    return f"{match.group(1)}{scheme}{MASK}"


def _basic_value(match: re.Match[str]) -> str:
    """Mask `Basic <b64>` only when the base64 decodes to `user:password` (not the English word)."""
    try:
        decoded = base64.b64decode(match.group(2) + "=" * (-len(match.group(2)) % 4), validate=True)
    except (binascii.Error, ValueError):
        return match.group(0)
    return f"{match.group(1)} {MASK}" if b":" in decoded else match.group(0)


def _key_value(match: re.Match[str]) -> str:
    quote_char, key, sep, value = match.groups()
    if value in (MASK, f'"{MASK}"', f"'{MASK}'"):
        return match.group(0)
    inner = MASK
    if value[:1] in "\"'" and len(value) >= 2:
        inner = value[0] + MASK + value[0]
    return f"{quote_char}{key}{quote_char}{sep}{inner}"


__all__ = ["MASK", "credentials", "literal_secret", "redact", "safe_url", "secret_forms", "secret_name", "secrets_in",
           "split_userinfo"]
