"""Webhook mode: the sandbox POSTs updates to our aiohttp app (SimpleRequestHandler + secret token).
Bad bodies (deeply nested, ids past 64 bits) are 400 with one log line, never 500/503; half-sent
requests are closed within the head/body timeouts, and too many at once are refused."""

from __future__ import annotations

import asyncio
import json
import logging
import time
import urllib.error
import urllib.request
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot import webhook as bot_webhook
from bot.app import create_app
from bot.db.models import DIALOG_COMPLETED
from bot.webhook import build_webhook_app, ensure_webhook, webhook_runner
from tests.bot.e2e.conftest import (
    QUIET_S,
    REPLY_TIMEOUT_S,
    Harness,
    assert_no_failed_calls,
    core,
    make_settings,
    result_mark,
    text,
)
from tests.bot.updates import message_body
from tgsandbox import Sandbox

SECRET = "webhook-secret-123"


@pytest.fixture
def head_timeout() -> float:
    """WEBHOOK_HEAD_TIMEOUT_S while the runner is built; a test parametrizes it shorter."""
    return bot_webhook.WEBHOOK_HEAD_TIMEOUT_S


@pytest.fixture
async def webhook_harness(
    tmp_path: Path, template_db: Path, head_timeout: float, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[Harness]:
    monkeypatch.setattr(bot_webhook, "WEBHOOK_HEAD_TIMEOUT_S", head_timeout)
    db_path = tmp_path / "bot.sqlite3"
    db_path.write_bytes(template_db.read_bytes())
    async with Sandbox(quiet_period=QUIET_S, reply_timeout=REPLY_TIMEOUT_S) as sandbox:
        settings = make_settings(db_path, telegram_api_url=sandbox.base_url)
        app = await create_app(settings, bot=sandbox.make_bot())
        runner = webhook_runner(build_webhook_app(app, secret=SECRET))
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = runner.addresses[0][1]
        url = f"http://127.0.0.1:{port}/webhook"
        sandbox.webhook_port = port  # type: ignore[attr-defined]  (the raw-socket tests below)
        allowed = app.dp.resolve_used_update_types()
        assert await ensure_webhook(app.bot, url, SECRET, allowed) is True
        assert await ensure_webhook(app.bot, url, SECRET, allowed) is False  # already registered
        try:
            yield Harness(sandbox, settings, app=app)
        finally:
            await runner.cleanup()
            await app.close()


async def test_dialog_over_webhook(webhook_harness: Harness) -> None:
    h = webhook_harness
    user = h.user(language_code="en")
    await user.send("/start")
    await user.click(text("task-inference", "en"))
    await user.click("Llama 3.1 8B")
    await user.click(core("precision", "q4_k_m", "en"))
    await user.click("4K")
    await user.click("16")
    assert result_mark("en") in (user.last_message().text or "")
    assert_no_failed_calls(h.sandbox)
    (dialog,) = await h.dialogs(user.id)
    assert dialog.status == DIALOG_COMPLETED and dialog.answers["precision"] == "q4_k_m"
    assert h.sandbox.webhook_info()["url"].startswith("http://127.0.0.1")


# ---------------------------------------------------------------- bad bodies, half-sent requests


def port_of(h: Harness) -> int:
    return int(h.sandbox.webhook_port)  # type: ignore[attr-defined]


async def post(h: Harness, body: bytes) -> tuple[int, str]:
    headers = {"X-Telegram-Bot-Api-Secret-Token": SECRET, "Content-Type": "application/json"}
    async with aiohttp.ClientSession() as session:
        url = f"http://127.0.0.1:{port_of(h)}/webhook"
        async with session.post(url, data=body, headers=headers) as response:
            return response.status, await response.text()


@pytest.mark.parametrize(
    "body",
    [
        b"[" * 100_000 + b"]" * 100_000,  # past the JSON decoder's recursion limit
        b'{"update_id": 1, "message": ' + b'{"a": ' * 5_000 + b"1" + b"}" * 5_001,  # deep, but JSON
        message_body(2**63),  # past the inbox's 64-bit column: was 503, retried forever
        message_body(10**30),
        message_body(7, user_id=2**64),  # the sender's id past 64 bits
        message_body(-(2**63) - 1),
        b"\xff\xfe not utf-8",
    ],
    ids=["nested", "deep-object", "update-id-2^63", "update-id-10^30", "user-id-2^64", "negative", "bytes"],
)
async def test_a_bad_body_is_a_bad_request_logged_once(
    webhook_harness: Harness, body: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="bot.webhook")
    status, _ = await post(webhook_harness, body)
    assert status == 400
    records = [r for r in caplog.records if r.name == "bot.webhook"]
    assert len(records) == 1 and records[0].levelno == logging.WARNING and not records[0].exc_info
    assert not any(r.exc_info for r in caplog.records)  # no traceback anywhere


async def open_half_sent(port: int, data: bytes) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(data)
    await writer.drain()
    return reader, writer


async def closed_with(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, bound: float) -> bytes:
    """What the server says before it closes the connection (b"" when it just closes)."""
    try:
        return await asyncio.wait_for(reader.read(), bound)
    finally:
        writer.close()


HALF_HEAD = b"POST /webhook HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: applica"
HALF_BODY = (
    b"POST /webhook HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
    b"X-Telegram-Bot-Api-Secret-Token: " + SECRET.encode() + b'\r\nContent-Length: 1000\r\n\r\n{"update_id"'
)
HALF_SENT = 30  # of each kind


@pytest.mark.parametrize("head_timeout", [0.5])
async def test_half_sent_requests_are_closed_in_time(
    webhook_harness: Harness, monkeypatch: pytest.MonkeyPatch, head_timeout: float
) -> None:
    """Requests whose head or body never arrives are closed (head) or answered 408 (body) within
    their timeouts; before, aiohttp's defaults kept them open for an hour. The bot still works."""
    monkeypatch.setattr(bot_webhook, "WEBHOOK_BODY_TIMEOUT_S", 1.0)
    port = port_of(webhook_harness)
    start = time.monotonic()
    heads = [await open_half_sent(port, HALF_HEAD) for _ in range(HALF_SENT)]
    bodies = [await open_half_sent(port, HALF_BODY) for _ in range(HALF_SENT)]
    bound = 2 * max(head_timeout, bot_webhook.WEBHOOK_BODY_TIMEOUT_S) + 2.0
    said = await asyncio.gather(*(closed_with(r, w, bound) for r, w in heads + bodies))
    assert time.monotonic() - start < bound
    assert said[:HALF_SENT] == [b""] * HALF_SENT  # the head never came: closed
    assert all(answer.startswith(b"HTTP/1.1 408") for answer in said[HALF_SENT:])
    await test_dialog_over_webhook(webhook_harness)


async def test_too_many_unfinished_bodies_are_refused_at_once(
    webhook_harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bot_webhook, "WEBHOOK_MAX_UNFINISHED", 4)
    monkeypatch.setattr(bot_webhook, "WEBHOOK_BODY_TIMEOUT_S", 2.0)
    port = port_of(webhook_harness)
    held = [await open_half_sent(port, HALF_BODY) for _ in range(4)]
    for _ in range(2):  # the fifth and sixth: 503 at once, well before the body timeout
        reader, writer = await open_half_sent(port, HALF_BODY)
        start = time.monotonic()
        answer = await closed_with(reader, writer, 1.5)
        assert answer.startswith(b"HTTP/1.1 503") and time.monotonic() - start < 1.5
    said = await asyncio.gather(*(closed_with(r, w, 6.0) for r, w in held))
    assert all(answer.startswith(b"HTTP/1.1 408") for answer in said)


# ---------------------------------------------------------------- any body: never 5xx, never a traceback

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=30,
)
update_shaped = st.fixed_dictionaries(
    {"update_id": st.integers()},
    optional={
        kind: st.dictionaries(
            st.sampled_from(["message_id", "date", "chat", "from", "text", "id", "data", "query"]),
            json_values,
            max_size=6,
        )
        for kind in ("message", "callback_query", "inline_query", "edited_message", "my_chat_member")
    },
)
bodies = st.one_of(
    st.binary(max_size=300),
    json_values.map(lambda v: json.dumps(v).encode()),
    update_shaped.map(lambda v: json.dumps(v).encode()),
    st.integers(min_value=1, max_value=3000).map(lambda n: b"[" * n + b"]" * n),
)


def post_in_thread(port: int, body: bytes) -> int:
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/webhook",
        data=body,
        headers={"X-Telegram-Bot-Api-Secret-Token": SECRET, "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return int(response.status)
    except urllib.error.HTTPError as e:
        return e.code


async def test_any_body_is_never_a_server_error(
    webhook_harness: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    """Arbitrary bytes, JSON and update-shaped JSON posted to the webhook: 200 or 4xx, and nothing
    logged with a traceback. Hypothesis runs in a thread (blocking posts) while the bot serves."""
    caplog.set_level(logging.WARNING)
    port = port_of(webhook_harness)
    statuses: list[int] = []

    @settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(bodies)
    def fuzz(body: bytes) -> None:
        status = post_in_thread(port, body)
        statuses.append(status)
        assert status < 500, body[:200]

    await asyncio.to_thread(fuzz)
    assert len(statuses) >= 100 and set(statuses) <= {200, 400}
    tracebacks = [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]
    assert tracebacks == [], [r.getMessage() for r in tracebacks]
