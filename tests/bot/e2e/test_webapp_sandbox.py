"""`python -m bot sandbox` prints a local URL opening the Mini App as the sandbox user (initData
signed with the sandbox's token); what the page sends to the chat shows up in the terminal chat."""

from __future__ import annotations

import io
import json
import re
import time
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from bot.__main__ import run_sandbox
from bot.config import load_settings
from tests.bot.e2e.conftest import result_mark
from tests.bot.e2e.webapp_fixtures import free_port

WAIT_S = 20.0


def post(url: str, path: str, init_data: str, body: Any) -> tuple[int, Any]:
    request = urllib.request.Request(
        url + path,
        data=json.dumps(body).encode(),
        headers={"X-Telegram-Init-Data": init_data, "Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=WAIT_S) as r:
        return r.status, json.loads(r.read())


async def test_the_sandbox_prints_a_url_that_opens_the_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    for name in ("BOT_TOKEN", "DATABASE_URL", "REDIS_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("WEBAPP_PORT", str(free_port()))
    screen = io.StringIO()
    seen: dict[str, Any] = {}

    def type_line(prompt: str) -> str:  # in a thread of its own: the bot runs meanwhile
        found = re.search(r"(http://127\.0\.0\.1:\d+/app)#(\S+)", screen.getvalue())
        assert found, screen.getvalue()
        base = found.group(1).removesuffix("/app")
        init_data = parse_qs(found.group(2))["tgWebAppData"][0]
        with urllib.request.urlopen(found.group(1), timeout=WAIT_S) as page:
            seen["page"] = page.status, page.read().decode()
        seen["init"] = post(base, "/app/api/init", init_data, {})
        seen["chat"] = post(base, "/app/api/chat", init_data, {"task": "inference", "model": "llama-3.1-8b"})
        deadline = time.monotonic() + WAIT_S
        while result_mark() not in screen.getvalue() and time.monotonic() < deadline:
            time.sleep(0.05)  # polling the terminal's text for the answer, not waiting a fixed time
        return "/quit"

    await run_sandbox(load_settings(), input_fn=type_line, output=screen)
    assert seen["page"][0] == 200 and "/app/static/app.js" in seen["page"][1]
    assert seen["init"][0] == 200 and seen["init"][1]["lang"] == "ru"
    assert seen["chat"] == (200, {"ok": True})
    assert result_mark() in screen.getvalue()
    assert urlsplit(re.findall(r"http://\S+", screen.getvalue())[0]).hostname == "127.0.0.1"
