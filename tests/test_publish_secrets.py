"""No credential in a message: the redactor masks every form a secret can take in an error."""

from __future__ import annotations

import base64
from urllib.parse import quote

from generator.publish.secrets import Redactor, safe_url


def test_redactor_masks_raw_encoded_and_basic_auth_forms() -> None:
    secret = "p@ss/w0rd+x"
    redact = Redactor()
    redact.add(secret, "alice")
    text = (f"raw {secret} url {quote(secret, safe='')} basic {base64.b64encode(f'alice:{secret}'.encode()).decode()} "
            f"header {base64.b64encode(f'x-access-token:{secret}'.encode()).decode()} "
            f"https://alice:{quote(secret, safe='')}@example.com/repo.git")
    masked = redact(text)
    assert secret not in masked and quote(secret, safe="") not in masked
    assert base64.b64encode(f"alice:{secret}".encode()).decode() not in masked
    assert "https://***@example.com/repo.git" in masked
    assert safe_url("https://x-access-token:tok@github.com/o/r.git") == "https://github.com/o/r.git"
    assert safe_url("/srv/market.git") == "/srv/market.git"
