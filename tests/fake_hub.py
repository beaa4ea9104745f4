"""A local fake of the Hugging Face Hub's two endpoints the look-up reads, on 127.0.0.1 (never the real
network): `/{repo}/resolve/main/config.json` and `/api/models/{repo}?expand=safetensors`. Unknown
repositories answer 401 as the Hub does; `stall` holds every answer until the server stops (a Hub
that does not answer in time); `fail_with` answers that status (a Hub having a bad moment)."""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any

FIXTURES = Path(__file__).parent / "core" / "fixtures" / "hf"


def fixture_config(hf_id: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((FIXTURES / hf_id.replace("/", "--") / "config.json").read_text())
    return loaded


class FakeHub:
    def __init__(self, models: dict[str, tuple[dict[str, Any], dict[str, int] | None]]) -> None:
        self.models = {k.lower(): v for k, v in models.items()}
        self.stall = False
        self.fail_with: int | None = None
        self.requests: list[str] = []
        self._release = threading.Event()
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                hub.requests.append(self.path)
                if hub.stall:
                    hub._release.wait()
                    return
                status, body = hub.answer(self.path)
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

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
                return 401, {"error": "Repository Not Found"}
            counts = found[1]
            return 200, {"id": match.group(1), **({"safetensors": {"parameters": counts}} if counts else {})}
        if match := re.fullmatch(r"/([^/]+/[^/]+)/resolve/main/config\.json", path):
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
