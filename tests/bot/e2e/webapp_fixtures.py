"""The Mini App served by the real bot (polling the sandbox, `conftest.running_bot`) on a local port,
and initData signed with the bot's token as Telegram signs it (`bot.webapp.auth.sign`)."""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import AsyncIterator, Coroutine, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from bot.throttle import Throttle
from bot.webapp.auth import sign
from bot.webapp.server import serve
from tests.bot.e2e.conftest import Harness, running_bot
from tgsandbox import ChatMessage, SandboxUser

HOST = "127.0.0.1"
START_TIMEOUT_S = 30.0
SALES_CHAT = -1009876543777


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


@dataclass
class Page:
    """The bot, its page at `url`, one sandbox user and an HTTP client."""

    harness: Harness
    url: str
    user: SandboxUser
    http: aiohttp.ClientSession

    @property
    def token(self) -> str:
        assert self.harness.app is not None
        return self.harness.app.bot.token

    def cards(self) -> list[ChatMessage]:
        """The lead cards the sales chat got."""
        return [m for m in self.harness.sandbox.chat(SALES_CHAT) if m.from_bot]

    async def wait_card(self) -> ChatMessage:
        await self.harness.sandbox.wait_for(lambda: len(self.cards()) >= 1, "a card in the sales chat")
        (card,) = self.cards()
        return card

    def init_data(self, **kwargs: Any) -> str:
        return sign(self.token, self.user.user, **kwargs)

    async def call(
        self,
        path: str,
        body: Any = None,
        *,
        init_data: str | None = None,
        method: str = "POST",
        **kwargs: Any,
    ) -> tuple[int, Any]:
        headers = {"X-Telegram-Init-Data": self.init_data() if init_data is None else init_data}
        async with self.http.request(method, self.url + path, json=body, headers=headers, **kwargs) as r:
            return r.status, await r.json(content_type=None)


@pytest.fixture(name="page")
async def page_fixture(tmp_path: Path, template_db: Path) -> AsyncIterator[Page]:
    async with running_bot(
        tmp_path, template_db, webapp_url="https://calc.example/app", sales_chat_id=SALES_CHAT
    ) as h:
        assert h.app is not None
        h.sandbox.user(id=900, first_name="Manager").in_group(chat_id=SALES_CHAT, title="Sales")
        port = free_port()
        runner = await serve(h.app, HOST, port)
        try:
            async with aiohttp.ClientSession() as http:
                yield Page(h, f"http://{HOST}:{port}", h.user(language_code="ru", username="tester"), http)
        finally:
            await runner.cleanup()


@dataclass
class ThreadedBot:
    """The real bot and its page running in a thread of their own (their own event loop), for tests
    that block (a browser driver, hypothesis): `run` waits for a coroutine on the bot's loop."""

    url: str
    harness: Harness
    loop: asyncio.AbstractEventLoop

    @property
    def token(self) -> str:
        assert self.harness.app is not None
        return self.harness.app.bot.token

    def run(self, coro: Coroutine[Any, Any, Any], timeout: float = START_TIMEOUT_S) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)


@contextmanager
def bot_in_thread(
    tmp_path: Path, template_db: Path, throttle: Throttle | None = None, **overrides: Any
) -> Iterator[ThreadedBot]:
    ready = threading.Event()
    found: dict[str, Any] = {}

    async def main() -> None:
        stop = found["stop"] = asyncio.Event()
        async with running_bot(tmp_path, template_db, **overrides) as h:
            assert h.app is not None
            port = free_port()
            runner = await serve(h.app, HOST, port, throttle)
            found["bot"] = ThreadedBot(f"http://{HOST}:{port}", h, asyncio.get_running_loop())
            ready.set()
            try:
                await stop.wait()
            finally:
                await runner.cleanup()

    def run() -> None:
        try:
            asyncio.run(main())
        finally:
            ready.set()

    thread = threading.Thread(target=run, name="bot-in-thread", daemon=True)
    thread.start()
    assert ready.wait(START_TIMEOUT_S) and "bot" in found, "the bot did not start"
    bot: ThreadedBot = found["bot"]
    try:
        yield bot
    finally:
        bot.loop.call_soon_threadsafe(found["stop"].set)
        thread.join(START_TIMEOUT_S)
