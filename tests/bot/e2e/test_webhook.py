"""Webhook mode: the sandbox POSTs updates to our aiohttp app (SimpleRequestHandler + secret token)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import web

from bot.app import build_webhook_app, create_app, ensure_webhook
from bot.db.models import DIALOG_COMPLETED
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
from tgsandbox import Sandbox

SECRET = "webhook-secret-123"


@pytest.fixture
async def webhook_harness(tmp_path: Path, template_db: Path) -> AsyncIterator[Harness]:
    db_path = tmp_path / "bot.sqlite3"
    db_path.write_bytes(template_db.read_bytes())
    async with Sandbox(quiet_period=QUIET_S, reply_timeout=REPLY_TIMEOUT_S) as sandbox:
        settings = make_settings(db_path, telegram_api_url=sandbox.base_url)
        app = await create_app(settings, bot=sandbox.make_bot())
        runner = web.AppRunner(build_webhook_app(app, secret=SECRET))
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = runner.addresses[0][1]
        url = f"http://127.0.0.1:{port}/webhook"
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
