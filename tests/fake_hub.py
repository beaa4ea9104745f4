"""A local fake of the Hugging Face Hub's two endpoints the look-up reads, on 127.0.0.1 (never the real
network): `/{repo}/resolve/main/config.json` and `/api/models/{repo}?expand=safetensors`. Unknown
repositories answer 401 as the Hub does; `stall` holds every answer until the server stops (a Hub
that does not answer in time); `fail_with` answers that status (a Hub having a bad moment).

Hostile mirrors: `drip_s` sends each answer (status line, headers, body) one byte every `drip_s`
seconds; `huge` answers an endless body; `raw_configs` serves a repository's config.json as given
bytes (JSON nested past any decoder, numbers Python's `json` cannot write)."""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any

FIXTURES = Path(__file__).parent / "core" / "fixtures" / "hf"
HUGE_CHUNKS = 3_000  # an endless body stops after this many 64 KB chunks (~200 MB)


def fixture_config(hf_id: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((FIXTURES / hf_id.replace("/", "--") / "config.json").read_text())
    return loaded


class _Handler(BaseHTTPRequestHandler):
    """Answers as `hub` says (set on a subclass per FakeHub)."""

    hub: FakeHub

    def do_GET(self) -> None:
        hub = self.hub
        hub.requests.append(self.path)
        if hub.stall:
            hub._release.wait()
            return
        if hub.huge:
            return self.endless()
        status, body = hub.answer(self.path)
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        head = (
            f"HTTP/1.1 {status} {self.responses.get(status, ('',))[0]}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n"
        ).encode()
        if hub.drip_s is None:
            self.wfile.write(head + data)
            return
        self.drip(head + data, hub.drip_s)

    def drip(self, answer: bytes, every_s: float) -> None:
        """`answer` one byte every `every_s` seconds, until the server stops or the client gives up."""
        self.close_connection = True
        for i in range(len(answer)):
            if self.hub._release.wait(every_s):
                return
            try:
                self.wfile.write(answer[i : i + 1])
                self.wfile.flush()
            except OSError:  # the client gave up
                return

    def endless(self) -> None:
        self.close_connection = True
        self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n[")
        chunk = b"1," * 32_768
        for _ in range(HUGE_CHUNKS):  # bounded, in case a client never stops reading
            if self.hub._release.is_set():
                return
            try:
                self.wfile.write(chunk)
            except OSError:
                return

    def log_message(self, format: str, *args: Any) -> None:
        pass


class FakeHub:
    def __init__(self, models: dict[str, tuple[dict[str, Any], dict[str, int] | None]]) -> None:
        self.models = {k.lower(): v for k, v in models.items()}
        self.stall = False
        self.fail_with: int | None = None
        self.drip_s: float | None = None
        self.huge = False
        self.raw_configs: dict[str, bytes] = {}
        self.requests: list[str] = []
        self._release = threading.Event()
        handler = type("Handler", (_Handler,), {"hub": self})
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.server.daemon_threads = True
        # stop() waits for serve_forever's next poll: 0.05 s instead of its default 0.5 s per test
        self._thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}"

    def answer(self, path: str) -> tuple[int, Any]:
        if self.fail_with is not None:
            return self.fail_with, {"error": "Internal Error"}
        if match := re.fullmatch(r"/api/models/([^/]+/[^/?]+)\?expand=safetensors", path):
            found = self.models.get(match.group(1).lower())
            if found is None:
                if match.group(1).lower() in self.raw_configs:
                    return 200, {"id": match.group(1)}
                return 401, {"error": "Repository Not Found"}
            counts = found[1]
            return 200, {"id": match.group(1), **({"safetensors": {"parameters": counts}} if counts else {})}
        if match := re.fullmatch(r"/([^/]+/[^/]+)/resolve/main/config\.json", path):
            if match.group(1).lower() in self.raw_configs:
                return 200, self.raw_configs[match.group(1).lower()]
            found = self.models.get(match.group(1).lower())
            return (200, found[0]) if found else (401, {"error": "Repository Not Found"})
        return 404, {"error": "Not Found"}

    def start(self) -> FakeHub:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._release.set()
        self.server.shutdown()
        self.server.server_close()
        self._thread.join(5)

    def __enter__(self) -> FakeHub:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._thread.is_alive():
            self.stop()
