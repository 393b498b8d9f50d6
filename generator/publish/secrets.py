"""Credentials for publishing, and the redactor every error and log line passes through.

Secrets come from the environment (or a credentials file the user names) and are never written to a
chart, the repository, a log line or an error message: `Redactor` replaces each secret, its URL-encoded
form and the base64 `user:password` of HTTP Basic auth with `***`, and `safe_url` drops the userinfo of
a URL before it is shown.
"""

from __future__ import annotations

import base64
import os
import re
from dataclasses import dataclass, field
from urllib.parse import quote, urlsplit, urlunsplit

MASK = "***"
TOKEN_ENV = ("CATALOG_GITHUB_TOKEN", "GITHUB_TOKEN")
REGISTRY_USER_ENV, REGISTRY_PASSWORD_ENV = "CATALOG_REGISTRY_USERNAME", "CATALOG_REGISTRY_PASSWORD"


class PublishError(Exception):
    """A publish step failed; the message is already redacted."""


@dataclass
class Redactor:
    secrets: list[str] = field(default_factory=list)

    def add(self, secret: str | None, user: str | None = None) -> None:
        if not secret:
            return
        forms = {secret, quote(secret, safe=""), _b64(secret), _b64(f"x-access-token:{secret}")}
        if user:
            forms.add(_b64(f"{user}:{secret}"))
        self.secrets += sorted(forms, key=len, reverse=True)

    def __call__(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, MASK)
        return _USERINFO.sub(r"\1" + MASK + "@", text)

    def error(self, message: str) -> PublishError:
        return PublishError(self(message))


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


_USERINFO = re.compile(r"(\b[a-z][a-z0-9+.-]*://)[^/\s@]+@", re.IGNORECASE)


def safe_url(url: str) -> str:
    """`url` without user or password, for display."""
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = host + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def github_token() -> str | None:
    return next((os.environ[name] for name in TOKEN_ENV if os.environ.get(name)), None)


def registry_login() -> tuple[str, str] | None:
    user, password = os.environ.get(REGISTRY_USER_ENV), os.environ.get(REGISTRY_PASSWORD_ENV)
    if bool(user) != bool(password):
        raise PublishError(f"set both {REGISTRY_USER_ENV} and {REGISTRY_PASSWORD_ENV}, or neither")
    return (user, password) if user and password else None
