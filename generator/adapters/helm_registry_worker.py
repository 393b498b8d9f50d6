"""The Helm engine's OCI registry client in a process of its own: `python -m generator.adapters.helm_registry_worker`.

helm_python calls Helm's Go SDK through ctypes (helm_python/_native.py); its registry calls take no
context and cannot be cancelled from Python (helm_c.h: `helm_registry_tags(handle, ref, ...)`, no
`helm_context_t`). So they run here, and `generator.adapters.helm.HelmRegistry` kills this process when
a call passes its deadline. Protocol: one JSON request per line on stdin, one JSON answer per line on
stdout (`{"ok": result}` or `{"error": class, "code": n, "message": text}`). Passwords come on stdin,
never in argv. Only the standard library and helm_python are imported here.
"""

from __future__ import annotations

import json
import sys
from typing import Any


def _handle(helm: Any, state: dict[str, Any], request: dict[str, Any]) -> Any:
    op = request["op"]
    if op == "open":
        state["client"] = helm.RegistryClient(plain_http=request["plain_http"],
                                              credentials_file=request.get("credentials_file"))
        return None
    client = state["client"]
    if op == "login":
        client.login(request["host"], request["user"], request["password"], plain_http=request["plain_http"])
        return None
    if op == "tags":
        return list(client.tags(request["ref"]))
    if op == "pull":
        return client.pull(request["ref"], version=request["version"], destination=request["destination"])
    if op == "push":
        return client.push(request["chart"], request["remote"])
    raise ValueError(f"unknown operation {op!r}")


def main() -> int:
    import helm_python as helm

    state: dict[str, Any] = {}
    for line in sys.stdin:
        request = json.loads(line)
        try:
            answer = {"ok": _handle(helm, state, request)}
        except helm.HelmError as exc:
            answer = {"error": type(exc).__name__, "code": exc.code, "message": str(exc)}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()
    if "client" in state:
        state["client"].close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
