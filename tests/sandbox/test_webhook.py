"""A real aiogram bot in webhook mode (SimpleRequestHandler), the sandbox POSTing updates to it."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import pytest
from aiogram import Bot, Dispatcher
from aiogram.exceptions import TelegramConflictError
from aiogram.types import WebhookInfo
from aiogram.webhook.aiohttp_server import SimpleRequestHandler, setup_application
from aiohttp import web

from tgsandbox import Sandbox

from .conftest import polling
from .tiny_bot import make_router

SECRET = "s3cret-token_1"
WEBHOOK_PATH = "/telegram/webhook"


@contextlib.asynccontextmanager
async def webhook_app(bot: Bot, *, handle_in_background: bool = True) -> AsyncIterator[str]:
    """The bot's webhook server on 127.0.0.1:<ephemeral>, as a production deployment wires it."""
    dispatcher = Dispatcher()
    dispatcher.include_router(make_router())
    app = web.Application()
    SimpleRequestHandler(
        dispatcher, bot, secret_token=SECRET, handle_in_background=handle_in_background
    ).register(app, path=WEBHOOK_PATH)
    setup_application(app, dispatcher, bot=bot)
    runner = web.AppRunner(app, shutdown_timeout=0.5)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        yield f"http://127.0.0.1:{runner.addresses[0][1]}{WEBHOOK_PATH}"
    finally:
        await runner.cleanup()


@pytest.mark.parametrize("handle_in_background", [True, False])
async def test_bot_works_over_webhook(sandbox: Sandbox, handle_in_background: bool) -> None:
    bot = sandbox.make_bot()
    async with webhook_app(bot, handle_in_background=handle_in_background) as url:
        assert await bot.set_webhook(url, secret_token=SECRET)
        user = sandbox.user(id=11)

        await user.send("/start")
        answer = await user.click("Yes")
        assert answer.text == "Noted: yes"
        assert user.last_message().text == "You said yes"

        await user.send("/fast")  # a method returned in the webhook response is run, like Telegram does
        assert user.last_message().text == "answered in the response"

        info = await bot.get_webhook_info()
        assert (info.url, info.pending_update_count, info.last_error_message) == (url, 0, None)


async def test_wrong_secret_is_rejected_and_reported(sandbox: Sandbox) -> None:
    bot = sandbox.make_bot()
    async with webhook_app(bot) as url:
        await bot.set_webhook(url, secret_token="not-the-secret")
        sandbox.user(id=12)
        await sandbox.deliver_raw(
            {
                "message": {
                    "message_id": 1,
                    "date": 0,
                    "chat": {"id": 12, "type": "private"},
                    "text": "/start",
                }
            }
        )
        info = await wait_for_webhook_error(bot)

        assert info.last_error_message == "Wrong response from the webhook: 401 Unauthorized"
        assert info.pending_update_count == 1
        assert sandbox.requests_for(12) == []  # the bot never saw the update

        await bot.set_webhook(url, secret_token=SECRET)  # fixed: the pending update goes through
        for _ in range(100):
            if sandbox.requests_for(12, "sendMessage"):
                break
            await asyncio.sleep(0.02)
        assert [m.text for m in sandbox.chat(12)] == ["Hello, do you like GPUs?"]


async def wait_for_webhook_error(bot: Bot) -> WebhookInfo:
    for _ in range(100):
        info = await bot.get_webhook_info()
        if info.last_error_message:
            return info
        await asyncio.sleep(0.02)
    raise AssertionError("the sandbox never reported a webhook error")


async def test_get_updates_conflicts_with_a_webhook(sandbox: Sandbox, bot: Bot) -> None:
    await bot.set_webhook("http://127.0.0.1:9/never-called")
    with pytest.raises(TelegramConflictError, match="can't use getUpdates method while webhook is active"):
        await bot.get_updates()
    await sandbox.deliver_raw({"message": {"message_id": 1, "date": 0, "chat": {"id": 1, "type": "private"}}})
    assert (await bot.get_webhook_info()).pending_update_count == 1
    await bot.delete_webhook(drop_pending_updates=True)
    assert await bot.get_updates(timeout=0) == []


async def test_switching_from_webhook_to_polling(sandbox: Sandbox, bot: Bot) -> None:
    await bot.set_webhook("http://127.0.0.1:9/never-called")
    await bot.delete_webhook()
    dispatcher = Dispatcher()
    dispatcher.include_router(make_router())
    async with polling(bot, dispatcher):
        await sandbox.user(id=13).send("ping")
    assert sandbox.chat(13)[-1].text == "echo: ping"


async def test_webhook_retries_until_accepted(sandbox: Sandbox, bot: Bot) -> None:
    received: list[tuple[str | None, int]] = []

    async def flaky(request: web.Request) -> web.Response:
        update = await request.json()
        received.append((request.headers.get("X-Telegram-Bot-Api-Secret-Token"), update["update_id"]))
        return web.Response(status=500 if len(received) < 3 else 200)

    app = web.Application()
    app.router.add_post("/hook", flaky)
    runner = web.AppRunner(app, shutdown_timeout=0.5)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    try:
        await bot.set_webhook(f"http://127.0.0.1:{runner.addresses[0][1]}/hook", secret_token=SECRET)
        update_id = await sandbox.deliver_raw(
            {
                "message": {
                    "message_id": 1,
                    "date": 0,
                    "chat": {"id": 1, "type": "private"},
                    "text": "hi",
                }
            }
        )
        for _ in range(200):
            if len(received) == 3 and (await bot.get_webhook_info()).pending_update_count == 0:
                break
            await asyncio.sleep(0.02)
        assert received == [(SECRET, update_id)] * 3
        info = await bot.get_webhook_info()
        assert info.last_error_message == "Wrong response from the webhook: 500 Internal Server Error"
    finally:
        await runner.cleanup()
