"""The HTML report in a real browser: headless Chromium loads it from a file, without console errors.

Driven over the Chrome DevTools protocol with a small websocket client from the
standard library, not selenium + chromedriver: no test dependency, no driver whose
version must match the browser's, and the protocol reports exactly what this test
asks about (console errors, exceptions, blocked loads) and takes the screenshot.
Runs only when Chromium is installed (Debian: `apt-get install chromium`); `.ci/run`
installs it when it can.
"""

from __future__ import annotations

import base64
import itertools
import json
import os
import shutil
import socket
import struct
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from irr_audit.io.sheets import ColumnChoice, read_sheet
from irr_audit.join.join import join_sheets
from irr_audit.report.html import render_html
from irr_audit.report.model import build_report
from irr_audit.rules.load import load_rule

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "tests" / "artifacts"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
TIMEOUT = 30.0

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (apt-get install chromium)")


# --- a minimal websocket client (RFC 6455): text frames, client-side masking -------------------


class WebSocket:
    def __init__(self, url: str) -> None:
        host_port, _, path = url.removeprefix("ws://").partition("/")
        host, _, port = host_port.partition(":")
        self.sock = socket.create_connection((host, int(port)), timeout=TIMEOUT)
        key = base64.b64encode(os.urandom(16)).decode()
        request = (
            f"GET /{path} HTTP/1.1\r\nHost: {host_port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        )
        self.sock.sendall(request.encode())
        response = b""
        while b"\r\n\r\n" not in response:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise ConnectionError("the browser closed the connection during the websocket handshake")
            response += chunk
        status = response.split(b"\r\n", 1)[0]
        if b" 101 " not in status:
            raise ConnectionError(f"websocket handshake refused: {status.decode(errors='replace')}")
        self.buffer = response.split(b"\r\n\r\n", 1)[1]

    def send(self, text: str) -> None:
        payload = text.encode()
        header = bytes([0x81])  # FIN + text frame
        length = len(payload)
        if length < 126:
            header += bytes([0x80 | length])
        elif length < 1 << 16:
            header += bytes([0x80 | 126]) + struct.pack(">H", length)
        else:
            header += bytes([0x80 | 127]) + struct.pack(">Q", length)
        mask = os.urandom(4)
        self.sock.sendall(header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))

    def _read(self, size: int) -> bytes:
        while len(self.buffer) < size:
            chunk = self.sock.recv(1 << 16)
            if not chunk:
                raise ConnectionError("the browser closed the websocket")
            self.buffer += chunk
        data, self.buffer = self.buffer[:size], self.buffer[size:]
        return data

    def receive(self) -> str:
        message = b""
        while True:
            first, second = self._read(2)
            length = second & 0x7F
            if length == 126:
                length = struct.unpack(">H", self._read(2))[0]
            elif length == 127:
                length = struct.unpack(">Q", self._read(8))[0]
            payload = self._read(length)
            opcode = first & 0x0F
            if opcode == 0x8:
                raise ConnectionError("the browser closed the websocket")
            if opcode in (0x9, 0xA):  # ping / pong: not part of a message
                continue
            message += payload
            if first & 0x80:
                return message.decode()

    def close(self) -> None:
        self.sock.close()


class DevTools:
    """Commands to one page target; events are kept for the test to read."""

    def __init__(self, url: str) -> None:
        self.ws = WebSocket(url)
        self.ids = itertools.count(1)
        self.events: list[dict[str, Any]] = []

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        number = next(self.ids)
        self.ws.send(json.dumps({"id": number, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.receive())
            if message.get("id") == number:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message["result"]
            self.events.append(message)

    def wait_for(self, method: str) -> dict[str, Any]:
        deadline = time.monotonic() + TIMEOUT
        for event in self.events:
            if event.get("method") == method:
                return event
        while time.monotonic() < deadline:
            message = json.loads(self.ws.receive())
            self.events.append(message)
            if message.get("method") == method:
                return message
        raise TimeoutError(f"no {method} within {TIMEOUT} s")

    def evaluate(self, expression: str) -> Any:
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def errors(self) -> list[str]:
        found = []
        for event in self.events:
            method, params = event.get("method"), event.get("params", {})
            if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                words = (str(arg.get("value", arg.get("description"))) for arg in params["args"])
                found.append("console: " + " ".join(words))
            elif method == "Runtime.exceptionThrown":
                found.append("exception: " + json.dumps(params["exceptionDetails"])[:500])
            elif method == "Log.entryAdded" and params["entry"]["level"] == "error":
                found.append("log: " + params["entry"]["text"])
        return found


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Headless Chromium with remote debugging on a free port; yields the debugging address."""
    profile = tmp_path_factory.mktemp("chromium-profile")
    command = [
        CHROMIUM,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
        "--hide-scrollbars",
        "--window-size=1100,1400",
        f"--user-data-dir={profile}",
        "--remote-debugging-port=0",
        "about:blank",
    ]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        port_file = profile / "DevToolsActivePort"
        deadline = time.monotonic() + TIMEOUT
        while not (port_file.is_file() and port_file.read_text().strip()):
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"Chromium did not start (exit code {process.poll()})")
            time.sleep(0.1)
        yield f"127.0.0.1:{port_file.read_text().split()[0]}"
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def open_page(browser: str, path: Path) -> DevTools:
    with urllib.request.urlopen(f"http://{browser}/json/list", timeout=TIMEOUT) as response:
        targets = json.load(response)
    page = next(target for target in targets if target["type"] == "page")
    tools = DevTools(page["webSocketDebuggerUrl"])
    for domain in ("Page", "Runtime", "Log"):
        tools.call(f"{domain}.enable")
    tools.call("Page.navigate", url=path.as_uri())
    tools.wait_for("Page.loadEventFired")
    return tools


def screenshot(tools: DevTools, name: str) -> Path:
    metrics = tools.call("Page.getLayoutMetrics")["cssContentSize"]
    shot = tools.call(
        "Page.captureScreenshot",
        format="png",
        captureBeyondViewport=True,
        clip={"x": 0, "y": 0, "width": metrics["width"], "height": metrics["height"], "scale": 1},
    )
    ARTIFACTS.mkdir(exist_ok=True)
    target = ARTIFACTS / name
    target.write_bytes(base64.b64decode(shot["data"]))
    return target


def write_report(folder: Path, sheets: list[Path], rule: Path) -> Path:
    joined = join_sheets([read_sheet(path, ColumnChoice()) for path in sheets], load_rule(rule))
    page = folder / "audit.html"
    page.write_text(render_html(build_report(joined).to_dict()), encoding="utf-8")
    return page


def test_example_report_renders_without_errors(browser: str, tmp_path: Path) -> None:
    page = write_report(
        tmp_path,
        [ROOT / "examples/sheets/alice.csv", ROOT / "examples/sheets/bob.csv"],
        ROOT / "rules/explicit_current_failure/v1.yaml",
    )
    tools = open_page(browser, page)
    try:
        dom = tools.evaluate("""({
            title: document.title,
            tables: document.querySelectorAll("table").length,
            heat: Array.from(document.querySelectorAll('[data-heatmap="table"] tbody td'), td => td.textContent),
            coloured: Array.from(document.querySelectorAll('[data-heatmap="table"] :is(td.cell, td.diagonal)'),
                                 td => getComputedStyle(td).backgroundColor),
            charts: document.querySelectorAll("svg.chart circle.point").length,
            filterShown: !document.getElementById("disagreement-filter").hidden,
            rows: document.querySelectorAll("#disagreement-table tbody tr").length,
            pageWidth: document.documentElement.scrollWidth,
            viewWidth: window.innerWidth,
        })""")
        assert dom["title"] == "Inter-coder reliability audit: explicit_current_failure v1"
        assert dom["tables"] >= 10
        assert dom["heat"] == ["8", "2", "10", "1", "9", "10", "9", "11", "20"]
        assert len(set(dom["coloured"])) == 4 and "rgba(0, 0, 0, 0)" not in dom["coloured"]
        assert (
            dom["charts"] == 7
        )  # kappa, pi, Fleiss, Conger, AC1, Brennan-Prediger, alpha: every coefficient has its dot
        assert dom["filterShown"] and dom["rows"] == 3
        assert dom["pageWidth"] <= dom["viewWidth"], "nothing sticks out sideways"
        shown = tools.evaluate("""(() => {
            const input = document.querySelector("#disagreement-filter input");
            input.value = "update";
            input.dispatchEvent(new Event("input"));
            return [document.querySelectorAll("#disagreement-table tbody tr:not([hidden])").length,
                    document.getElementById("disagreement-shown").textContent];
        })()""")
        assert shown == [1, "1 of 3 shown"]
        assert screenshot(tools, "report-example.png").stat().st_size > 10_000
        assert tools.errors() == []
    finally:
        tools.ws.close()


def test_three_coder_report_renders_its_heatmaps(browser: str, tmp_path: Path) -> None:
    case = ROOT / "tests/examples/E_three_raters"
    page = write_report(tmp_path, sorted((case / "sheets").glob("*.csv")), case / "rule.yaml")
    tools = open_page(browser, page)
    try:
        dom = tools.evaluate("""({
            heatmaps: Array.from(document.querySelectorAll("[data-heatmap]"), f => f.dataset.heatmap),
            pairwise: Array.from(document.querySelectorAll('[data-heatmap="pairwise"] tbody td'), td => td.textContent),
            visible: Array.from(document.querySelectorAll("table.heat"), t => t.getBoundingClientRect().height > 0),
        })""")
        assert dom["heatmaps"][:2] == ["table", "pairwise"] and dom["heatmaps"].count("pair") == 3
        assert len(dom["pairwise"]) == 9 and dom["pairwise"][0] == "-"
        assert all(dom["visible"])
        screenshot(tools, "report-three-coders.png")
        assert tools.errors() == []
    finally:
        tools.ws.close()


def test_the_error_check_sees_errors(browser: str, tmp_path: Path) -> None:
    """A control: a page that logs an error and asks for an external image fails the check above."""
    page = tmp_path / "broken.html"
    page.write_text(
        """<!DOCTYPE html><html><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'">
<title>broken</title></head><body><img src="http://example.invalid/x.png" alt="">
<script>console.error("deliberate");</script></body></html>""",
        encoding="utf-8",
    )
    tools = open_page(browser, page)
    try:
        tools.evaluate("1")  # let pending events arrive
        errors = tools.errors()
        assert any("deliberate" in error for error in errors)
        assert any("Content Security Policy" in error or "example.invalid" in error for error in errors), errors
    finally:
        tools.ws.close()
