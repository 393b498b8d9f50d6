"""Credentials for publishing, and the redactor every publish error and log line passes through.

Secrets come from the environment (or a credentials file the user names) and are never written to a
chart, the repository, a log line or an error message. `Redactor` is generator/core/redact.py's one
redactor plus the secrets this run knows (each with its URL-encoded and base64 Basic-auth forms);
`safe_url` drops the userinfo of a URL (whatever characters the password holds) before it is shown.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from generator.core import MASK, secret_forms
from generator.core.redact import redact
from generator.core import safe_url as _safe_url

TOKEN_ENV = ("CATALOG_GITHUB_TOKEN", "GITHUB_TOKEN")
REGISTRY_USER_ENV, REGISTRY_PASSWORD_ENV = "CATALOG_REGISTRY_USERNAME", "CATALOG_REGISTRY_PASSWORD"


class PublishError(Exception):
    """A publish step failed; the message is already redacted."""


@dataclass
class Redactor:
    secrets: list[str] = field(default_factory=list)

    def add(self, secret: str | None, user: str | None = None) -> None:
        if secret:
            self.secrets = sorted(set(self.secrets) | set(secret_forms([secret], user)), key=len, reverse=True)

    def __call__(self, text: str) -> str:
        return redact(text, self.secrets)

    def error(self, message: str) -> PublishError:
        return PublishError(self(message))


def safe_url(url: str) -> str:
    """`url` without user or password (and with secret query values masked), for display."""
    return _safe_url(url)


def github_token() -> str | None:
    return next((os.environ[name] for name in TOKEN_ENV if os.environ.get(name)), None)


def registry_login() -> tuple[str, str] | None:
    user, password = os.environ.get(REGISTRY_USER_ENV), os.environ.get(REGISTRY_PASSWORD_ENV)
    if bool(user) != bool(password):
        raise PublishError(f"set both {REGISTRY_USER_ENV} and {REGISTRY_PASSWORD_ENV}, or neither")
    return (user, password) if user and password else None


__all__ = ["MASK", "PublishError", "Redactor", "github_token", "registry_login", "safe_url"]
