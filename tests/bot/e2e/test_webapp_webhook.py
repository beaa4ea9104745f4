"""Webhook mode: the Mini App's page and API are served by the webhook server itself."""

from __future__ import annotations

import aiohttp

from bot.webapp.auth import sign
from tests.bot.e2e.conftest import Harness
from tests.bot.e2e.test_webhook import head_timeout, port_of, webhook_harness  # noqa: F401  (fixtures)


async def test_the_webhook_server_serves_the_page(webhook_harness: Harness) -> None:  # noqa: F811
    assert webhook_harness.app is not None
    base = f"http://127.0.0.1:{port_of(webhook_harness)}"
    init_data = sign(webhook_harness.app.bot.token, {"id": 4242, "first_name": "W", "language_code": "en"})
    request = {"task": "inference", "model": "llama-3.1-8b"}
    async with aiohttp.ClientSession() as http:
        async with http.get(f"{base}/app") as page:
            assert page.status == 200 and "/app/static/app.js" in await page.text()
            assert "script-src 'self' https://telegram.org" in page.headers["Content-Security-Policy"]
        async with http.get(f"{base}/app/static/app.js") as script:
            assert script.status == 200
        headers = {"X-Telegram-Init-Data": init_data}
        async with http.post(f"{base}/app/api/answer", json=request, headers=headers) as answer:
            assert answer.status == 200 and (await answer.json())["total_bytes"] > 0
        async with http.post(f"{base}/app/api/answer", json=request) as unsigned:
            assert unsigned.status == 401
        async with http.get(f"{base}/healthz") as health:  # beside it, unchanged
            assert health.status == 200
