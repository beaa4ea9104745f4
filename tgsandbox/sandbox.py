"""``Sandbox``: the fake Telegram Bot API server on 127.0.0.1, its users and what it recorded."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable
from types import TracebackType
from typing import Any

from aiogram import Bot
from aiogram.client.default import DefaultBotProperties
from aiogram.client.session.aiohttp import AiohttpSession
from aiogram.client.telegram import TelegramAPIServer
from aiogram.enums import ParseMode
from aiogram.types import User
from aiohttp import web

from .driver import SandboxUser
from .errors import ApiError, SandboxTimeout
from .methods import find_method
from .params import Params, Upload, decode_json_params
from .server import make_app, run_method
from .state import ChatMessage, RecordedRequest
from .telegram import FakeTelegram, FaultRule, FloodRule, Gate, Latency


class LocalAiohttpSession(AiohttpSession):
    """aiogram's session without its 250 ms pause on close, which is for TLS: there is none on 127.0.0.1."""

    async def close(self) -> None:
        if self._session is not None and not self._session.closed:
            await self._session.close()


class Sandbox:
    """A local fake of api.telegram.org for one bot.

    ``async with Sandbox() as sandbox: bot = sandbox.make_bot(); user = sandbox.user(id=1)``
    """

    def __init__(
        self,
        *,
        bot_id: int = 123456,
        bot_username: str = "sandbox_bot",
        reply_timeout: float = 5.0,
        quiet_period: float = 0.15,
        query_ttl: float = 15.0,
        first_update_id: int = 1,
        webhook_connections: int = 1,
    ) -> None:
        # Telegram's update ids only grow; a bot that keeps processed ids across runs (de-duplication)
        # needs a sandbox started later to continue above the earlier ones: pass e.g. a timestamp.
        self.telegram = FakeTelegram(bot_id, bot_username, query_ttl, first_update_id)
        self.telegram.updates.on_webhook_reply = self._run_webhook_reply
        # POSTs to a webhook at a time: 1 keeps the order strict; Telegram opens up to 40 (load tests).
        self.telegram.updates.webhook_connections = webhook_connections
        self.reply_timeout = reply_timeout
        self.quiet_period = quiet_period
        self._runner: web.AppRunner | None = None
        self._port: int | None = None
        self._bots: list[Bot] = []

    async def __aenter__(self) -> Sandbox:
        await self.start()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    async def start(self) -> None:
        # handler_cancellation: a long poll whose client went away must not linger on shutdown.
        self._runner = web.AppRunner(
            make_app(self.telegram), handler_cancellation=True, shutdown_timeout=0.5, access_log=None
        )
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self._port = self._runner.addresses[0][1]

    async def close(self) -> None:
        for gate in self.telegram.gates:
            gate.release()
        for bot in self._bots:
            await bot.session.close()
        await self.telegram.updates.close()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    # --- connecting a bot ---

    @property
    def base_url(self) -> str:
        if self._port is None:
            raise RuntimeError("the sandbox is not started: use `async with Sandbox() as sandbox`")
        return f"http://127.0.0.1:{self._port}"

    @property
    def token(self) -> str:
        return self.telegram.token

    @property
    def bot_user(self) -> User:
        return self.telegram.bot_user

    @property
    def api_server(self) -> TelegramAPIServer:
        return TelegramAPIServer.from_base(self.base_url)

    def make_bot(self, token: str | None = None) -> Bot:
        """An aiogram ``Bot`` on this sandbox (HTML parse mode); its session closes with the sandbox."""
        bot = Bot(
            token or self.token,
            session=LocalAiohttpSession(api=self.api_server),
            default=DefaultBotProperties(parse_mode=ParseMode.HTML),
        )
        self._bots.append(bot)
        return bot

    # --- users and updates ---

    def user(
        self,
        id: int = 1001,
        first_name: str = "Test",
        *,
        last_name: str | None = None,
        username: str | None = None,
        language_code: str | None = "en",
        is_premium: bool | None = None,
    ) -> SandboxUser:
        """A user in a private chat with the bot (chat id == user id)."""
        user = User(
            id=id,
            is_bot=False,
            first_name=first_name,
            last_name=last_name,
            username=username,
            language_code=language_code,
            is_premium=is_premium,
        )
        return SandboxUser(self.telegram, user, quiet_period=self.quiet_period, timeout=self.reply_timeout)

    async def deliver_raw(self, update: dict[str, Any]) -> int:
        """Queue an update as given (keeps its ``update_id`` if it has one); returns the update_id."""
        return await self.telegram.updates.push(update)

    # --- what happened ---

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every call the bot made except getUpdates, oldest first (failed ones have ``error``)."""
        return list(self.telegram.requests)

    def requests_for(self, chat_id: int, method: str | None = None) -> list[RecordedRequest]:
        return [
            r
            for r in self.telegram.requests
            if r.chat_id == chat_id and (method is None or r.method.lower() == method.lower())
        ]

    def upload(self, file_id: str) -> bytes | None:
        """The bytes the bot uploaded as ``file_id`` (a photo's or a document's), None if none was."""
        file = self.telegram.files.get(file_id)
        return file.content if isinstance(file, Upload) else None

    def chat(self, chat_id: int) -> list[ChatMessage]:
        """The message history of a chat, oldest first, deleted messages flagged."""
        log = self.telegram.chats.get(chat_id)
        return log.history() if log else []

    def commands(self, scope: dict[str, Any] | None = None, language_code: str = "") -> list[dict[str, Any]]:
        """Commands the bot set with setMyCommands for that scope and language."""
        params = Params({"scope": scope, "language_code": language_code})
        return list(self.telegram.commands.get(self.telegram.commands_key(params), []))

    def webhook_info(self) -> dict[str, Any]:
        return self.telegram.updates.webhook_info()

    async def wait_for(self, condition: Callable[[], bool], what: str, timeout: float | None = None) -> None:
        """Wait until ``condition()`` holds (checked every 10 ms), at most ``timeout`` s (reply_timeout)."""
        deadline = time.monotonic() + (self.reply_timeout if timeout is None else timeout)
        while not condition():
            if time.monotonic() >= deadline:
                raise SandboxTimeout(f"timed out waiting for {what}")
            await asyncio.sleep(0.01)

    def sent(self, method: str = "sendMessage") -> list[RecordedRequest]:
        """Successful calls of ``method``, oldest first."""
        return [r for r in self.telegram.requests if r.method.lower() == method.lower() and not r.error]

    @property
    def polls(self) -> int:
        """getUpdates calls so far (the first one: the bot has started polling)."""
        return self.telegram.updates.polls

    def busy_while(self, busy: Callable[[], bool]) -> None:
        """Tell the driver the bot is still working while ``busy()``: its waits also wait for that."""
        self.telegram.bot_busy = busy

    # --- misbehaving like Telegram ---

    def hold(self, methods: Iterable[str] | None = None, *, after: int = 0) -> Gate:
        """Hold the bot's calls of ``methods`` (all: None) after the first ``after``, before they take
        effect, until ``gate.release()``; ``gate.held`` is how many wait now."""
        gate = Gate(frozenset(m.lower() for m in methods) if methods is not None else None, after)
        self.telegram.gates.append(gate)
        return gate

    def latency(self, seconds: float, methods: Iterable[str] | None = None) -> Latency:
        """Answer the bot's calls of ``methods`` (all: None; getUpdates' long poll is never delayed)
        ``seconds`` later, as a Bot API server that far away would; ``gate.release()`` ends it."""
        gate = Latency(seconds, frozenset(m.lower() for m in methods) if methods is not None else None)
        self.telegram.gates.append(gate)
        return gate

    def flood_limit(
        self,
        retry_after: int = 1,
        *,
        methods: Iterable[str] | None = None,
        chat_id: int | None = None,
        times: int = 1,
    ) -> None:
        """Answer the next ``times`` matching calls with 429 "Too Many Requests: retry after N"."""
        names = frozenset(m.lower() for m in methods) if methods is not None else None
        self.telegram.flood_rules.append(FloodRule(retry_after, names, chat_id, times))

    def fail(
        self,
        error_code: int = 500,
        description: str | None = None,
        *,
        methods: Iterable[str] | None = None,
        chat_id: int | None = None,
        times: int | None = 1,
        retry_after: int | None = None,
    ) -> FaultRule:
        """Answer the next ``times`` matching calls (None: all of them until ``rule.stop()``) with
        ``error_code`` (400 "Bad Request: …", 429 with ``retry_after``, 5xx). ``rule.hits`` counts them."""
        defaults = {400: "Bad Request: chat not found", 429: f"Too Many Requests: retry after {retry_after}"}
        text = description or defaults.get(error_code, f"Internal Server Error ({error_code})")
        names = frozenset(m.lower() for m in methods) if methods is not None else None
        rule = FaultRule(error_code, text, names, chat_id, times, retry_after)
        self.telegram.fault_rules.append(rule)
        return rule

    async def _run_webhook_reply(self, method: str, fields: dict[str, Any]) -> None:
        handler = find_method(method)
        if handler is None:
            raise ApiError(404, "Not Found")
        await run_method(self.telegram, method, handler, Params(decode_json_params(fields)))
