"""The wire format itself, without aiogram: bodies in JSON, form or query string; error objects."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest

from tgsandbox import Sandbox


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=5)) as session:
        yield session


async def call(http: aiohttp.ClientSession, url: str, **kwargs: Any) -> tuple[int, dict[str, Any]]:
    async with http.post(url, **kwargs) as response:
        return response.status, await response.json()


async def test_json_body_with_nested_objects(sandbox: Sandbox, http: aiohttp.ClientSession) -> None:
    sandbox.user(id=3)
    markup = {"inline_keyboard": [[{"text": "go", "callback_data": "go"}]]}
    status, body = await call(
        http,
        f"{sandbox.base_url}/bot{sandbox.token}/sendMessage",
        json={"chat_id": 3, "text": "<b>hi</b>", "parse_mode": "HTML", "reply_markup": markup},
    )
    assert status == 200 and body["ok"] is True
    result = body["result"]
    assert (result["text"], result["entities"], result["reply_markup"]) == (
        "hi",
        [{"type": "bold", "offset": 0, "length": 2}],
        markup,
    )


async def test_query_string_and_case_insensitive_method(
    sandbox: Sandbox, http: aiohttp.ClientSession
) -> None:
    status, body = await call(http, f"{sandbox.base_url}/bot{sandbox.token}/GETME?unused=1")
    assert status == 200 and body["result"] == {
        "id": 123456,
        "is_bot": True,
        "first_name": "Sandbox Bot",
        "username": "sandbox_bot",
        "can_join_groups": True,
        "can_read_all_group_messages": False,
        "supports_inline_queries": True,
    }


async def test_error_objects(sandbox: Sandbox, http: aiohttp.ClientSession) -> None:
    assert await call(http, f"{sandbox.base_url}/bot1:WRONG/getMe") == (
        401,
        {"ok": False, "error_code": 401, "description": "Unauthorized"},
    )
    assert await call(http, f"{sandbox.base_url}/bot{sandbox.token}/noSuchMethod") == (
        404,
        {"ok": False, "error_code": 404, "description": "Not Found"},
    )
    sandbox.flood_limit(retry_after=2)
    assert await call(http, f"{sandbox.base_url}/bot{sandbox.token}/getMe") == (
        429,
        {
            "ok": False,
            "error_code": 429,
            "description": "Too Many Requests: retry after 2",
            "parameters": {"retry_after": 2},
        },
    )
    status, body = await call(
        http, f"{sandbox.base_url}/bot{sandbox.token}/sendMessage", data={"chat_id": "5", "text": "x"}
    )
    assert (status, body["description"]) == (400, "Bad Request: chat not found")
    sandbox.user(id=5)
    status, body = await call(
        http,
        f"{sandbox.base_url}/bot{sandbox.token}/sendMessage",
        data={"chat_id": "5", "text": "x", "entities": '[{"type": "bold"}]'},
    )
    assert (status, body["description"]) == (400, "Bad Request: can't parse entities JSON object")
