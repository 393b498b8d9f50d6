"""A real headless Chromium (Debian's `chromium` package) driven over the DevTools protocol.

Chromium starts with `--remote-debugging-port=0` in a private profile and writes the port it chose to
`DevToolsActivePort`; a page target is opened over HTTP and driven over its WebSocket (websocket-client).
While a page loads, every console error, uncaught exception, log entry of level error, failed request and
HTTP error status is collected: the page test asserts there are none. Chromium is killed by its PID.
"""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

INSTALL = "Debian's chromium is not installed: apt-get install -y chromium (.ci/run installs it)"


def chromium_binary() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        pytest.skip(INSTALL)
    return path


@dataclass
class Loaded:
    errors: list[str] = field(default_factory=list)  # console errors, exceptions, failed or >= 400 requests
    requests: list[str] = field(default_factory=list)


class Page:
    def __init__(self, ws_url: str):
        import websocket

        self.ws = websocket.create_connection(ws_url, timeout=60, suppress_origin=True)
        self.next_id = 0
        self.events: list[dict[str, Any]] = []

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        self.next_id += 1
        ident = self.next_id
        self.ws.send(json.dumps({"id": ident, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == ident:
                if "error" in msg:
                    raise AssertionError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            self.events.append(msg)

    def drain(self, seconds: float) -> None:
        import websocket

        deadline = time.monotonic() + seconds
        self.ws.settimeout(0.2)
        try:
            while time.monotonic() < deadline:
                try:
                    self.events.append(json.loads(self.ws.recv()))
                except websocket.WebSocketTimeoutException:
                    continue
        finally:
            self.ws.settimeout(60)

    def load(self, url: str, timeout: float = 60.0) -> Loaded:
        """Navigate, wait for the load event and a quiet network, and report what went wrong."""
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable")
        self.events.clear()
        self.call("Page.navigate", url=url)
        deadline = time.monotonic() + timeout
        while not any(e.get("method") == "Page.loadEventFired" for e in self.events):
            if time.monotonic() > deadline:
                raise AssertionError(f"{url} did not load within {timeout}s")
            self.drain(0.3)
        self.drain(1.0)  # late requests and console messages
        loaded = Loaded()
        for e in self.events:
            method, p = e.get("method"), e.get("params", {})
            if method == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert", "warning"):
                loaded.errors.append(f"console.{p['type']}: {[a.get('value') for a in p.get('args', [])]}")
            elif method == "Runtime.exceptionThrown":
                loaded.errors.append(f"exception: {p['exceptionDetails'].get('text')}")
            elif method == "Log.entryAdded" and p["entry"]["level"] == "error":
                loaded.errors.append(f"log: {p['entry'].get('text')} {p['entry'].get('url', '')}")
            elif method == "Network.loadingFailed":
                loaded.errors.append(f"request failed: {p.get('errorText')} ({p.get('type')})")
            elif method == "Network.responseReceived":
                loaded.requests.append(p["response"]["url"])
                if p["response"]["status"] >= 400:
                    loaded.errors.append(f"HTTP {p['response']['status']}: {p['response']['url']}")
        return loaded

    def evaluate(self, expression: str) -> Any:
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise AssertionError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def screenshot(self, path: Path, width: int = 1400) -> Path:
        height = int(self.evaluate("document.documentElement.scrollHeight"))
        self.call("Emulation.setDeviceMetricsOverride", width=width, height=min(height, 6000), deviceScaleFactor=1,
                  mobile=False)
        data = self.call("Page.captureScreenshot", format="png", captureBeyondViewport=True)["data"]
        path.write_bytes(base64.b64decode(data))
        return path


@contextmanager
def chromium(profile: Path, width: int = 1400, height: int = 1000) -> Iterator[Page]:
    binary = chromium_binary()
    profile.mkdir(parents=True, exist_ok=True)
    argv = [binary, "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
            "--no-default-browser-check", "--hide-scrollbars", "--remote-debugging-port=0",
            "--remote-allow-origins=*", f"--user-data-dir={profile}", f"--window-size={width},{height}",
            "about:blank"]
    log = (profile.parent / f"{profile.name}.log").open("wb")
    proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
    page = None
    try:
        port_file = profile / "DevToolsActivePort"
        deadline = time.monotonic() + 60
        while not (port_file.is_file() and port_file.read_text().strip()):
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"chromium did not start (exit {proc.poll()}); see {log.name}")
            time.sleep(0.1)
        port = int(port_file.read_text().split()[0])
        target = httpx.put(f"http://127.0.0.1:{port}/json/new?about:blank", timeout=30).json()
        page = Page(target["webSocketDebuggerUrl"])
        yield page
    finally:
        if page is not None:
            page.ws.close()
        proc.kill()
        proc.wait(timeout=10)
        log.close()
