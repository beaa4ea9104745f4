"""One factory building the Bot and the Dispatcher from Settings; runners for polling and webhook."""

from __future__ import annotations

import asyncio
import hashlib
import logging
import signal
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from aiogram import BaseMiddleware, Bot, Dispatcher
from aiogram.client.default import DefaultBotProperties
from aiogram.client.session.aiohttp import AiohttpSession
from aiogram.client.session.middlewares.base import BaseRequestMiddleware, NextRequestMiddlewareType
from aiogram.client.telegram import PRODUCTION, TelegramAPIServer
from aiogram.enums import ParseMode
from aiogram.exceptions import TelegramRetryAfter
from aiogram.fsm.storage.memory import SimpleEventIsolation
from aiogram.fsm.storage.redis import RedisStorage
from aiogram.methods import Response, TelegramMethod
from aiogram.methods.base import TelegramType
from aiogram.types import TelegramObject
from aiogram.utils.callback_answer import CallbackAnswerMiddleware
from aiogram_i18n import I18nMiddleware
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.config import Settings
from bot.context import DialogContextMiddleware
from bot.db.engine import create_engine, create_sessionmaker, migrate, sqlite_file
from bot.db.middleware import DbSessionMiddleware, forget_old_updates
from bot.handlers import routers
from bot.handlers.commands import set_commands
from bot.i18n import build_i18n
from bot.storage import build_storage
from core.catalog import Catalog, default_catalog, load_catalog

log = logging.getLogger(__name__)
SHUTDOWN_GRACE_S = 10.0


class InFlight(BaseMiddleware):
    """Counts updates being handled, so shutdown can wait for them (aiogram does not)."""

    def __init__(self) -> None:
        self.count = 0
        self.idle = asyncio.Event()
        self.idle.set()

    async def __call__(
        self,
        handler: Callable[[TelegramObject, dict[str, Any]], Awaitable[Any]],
        event: TelegramObject,
        data: dict[str, Any],
    ) -> Any:
        self.count += 1
        self.idle.clear()
        try:
            return await handler(event, data)
        finally:
            self.count -= 1
            if self.count == 0:
                self.idle.set()

    async def wait(self, timeout: float = SHUTDOWN_GRACE_S) -> None:
        try:
            await asyncio.wait_for(self.idle.wait(), timeout)
        except TimeoutError:
            log.warning("shutting down with %d update(s) still being handled", self.count)


class RetryAfterMiddleware(BaseRequestMiddleware):
    """Telegram's flood control answers 429 with `retry_after`; aiogram raises, we wait and retry."""

    def __init__(self, attempts: int = 3, max_wait_s: float = 30.0) -> None:
        self.attempts = attempts
        self.max_wait_s = max_wait_s

    async def __call__(
        self,
        make_request: NextRequestMiddlewareType[TelegramType],
        bot: Bot,
        method: TelegramMethod[TelegramType],
    ) -> Response[TelegramType]:
        for attempt in range(1, self.attempts + 1):
            try:
                return await make_request(bot, method)
            except TelegramRetryAfter as e:
                if attempt == self.attempts or e.retry_after > self.max_wait_s:
                    raise
                log.warning("flood control on %s: retrying in %s s", type(method).__name__, e.retry_after)
                await asyncio.sleep(e.retry_after)
        raise AssertionError("unreachable")


@dataclass
class App:
    bot: Bot
    dp: Dispatcher
    engine: AsyncEngine
    settings: Settings
    i18n: I18nMiddleware

    async def close(self) -> None:
        await self.dp.storage.close()
        await self.bot.session.close()
        await self.engine.dispose()


def build_bot(settings: Settings, token: str | None = None) -> Bot:
    """A Bot for Telegram, or for a self-hosted / fake Bot API server at TELEGRAM_API_URL."""
    secret = token or (settings.bot_token.get_secret_value() if settings.bot_token else None)
    if not secret:
        raise SystemExit("BOT_TOKEN is not set (try `python -m bot sandbox` to chat without one)")
    session = None
    if settings.telegram_api_url.rstrip("/") != PRODUCTION.base.split("/bot")[0]:
        session = AiohttpSession(api=TelegramAPIServer.from_base(settings.telegram_api_url))
    return Bot(
        secret,
        session=session,
        default=DefaultBotProperties(parse_mode=ParseMode.HTML, link_preview_is_disabled=True),
    )


def catalog_for(settings: Settings) -> Catalog:
    return load_catalog(offers_file=settings.offers_file) if settings.offers_file else default_catalog()


async def create_app(settings: Settings, *, bot: Bot | None = None) -> App:
    """Bot + Dispatcher wired as in production; the embedded SQLite database is migrated first."""
    bot = bot or build_bot(settings)
    bot.session.middleware(RetryAfterMiddleware())
    if sqlite_file(settings.database_url) is not None:
        await migrate(settings.database_url)
    engine = create_engine(settings.database_url)
    sessionmaker = create_sessionmaker(engine)
    storage = build_storage(settings, sessionmaker)
    # One update per user at a time: a double tap must not run the same step twice. Across replicas
    # (Redis) the lock lives in Redis; the embedded database means one process, so a local lock.
    isolation = storage.create_isolation() if isinstance(storage, RedisStorage) else SimpleEventIsolation()
    dp = Dispatcher(
        storage=storage,
        events_isolation=isolation,
        catalog=catalog_for(settings),
        settings=settings,
    )
    in_flight = InFlight()
    dp.update.outer_middleware(in_flight)
    dp.update.outer_middleware(DbSessionMiddleware(sessionmaker))
    i18n = build_i18n(settings.default_language)
    i18n.setup(dp)  # after the DB middleware: the locale comes from the users table
    dp.callback_query.middleware(CallbackAnswerMiddleware())
    dp.message.middleware(DialogContextMiddleware())
    dp.callback_query.middleware(DialogContextMiddleware())
    dp.include_routers(*routers())

    async def on_startup(bot: Bot) -> None:
        await set_commands(bot, i18n.core.get, settings.default_language)
        await forget_old_updates(sessionmaker)

    dp.startup.register(on_startup)
    dp.shutdown.register(in_flight.wait)
    return App(bot=bot, dp=dp, engine=engine, settings=settings, i18n=i18n)


async def run_polling(settings: Settings) -> None:
    app = await create_app(settings)
    try:
        await app.bot.delete_webhook(drop_pending_updates=False)
        await app.dp.start_polling(app.bot, allowed_updates=app.dp.resolve_used_update_types())
    finally:
        await app.close()


def webhook_registration_url(url: str, secret: str | None) -> str:
    """The URL to register: tagged with a short hash of the secret, so a new secret changes it.

    Telegram never tells the secret back, so comparing URLs is how a replica knows whether the
    registration it would make is already in place.
    """
    if not secret:
        return url
    tag = hashlib.sha256(secret.encode()).hexdigest()[:12]
    return f"{url}{'&' if '?' in url else '?'}v={tag}"


async def ensure_webhook(bot: Bot, url: str, secret: str | None, allowed_updates: list[str]) -> bool:
    """setWebhook only when Telegram's registration differs (several replicas start at once)."""
    url = webhook_registration_url(url, secret)
    info = await bot.get_webhook_info()
    if info.url == url and sorted(info.allowed_updates or []) == sorted(allowed_updates):
        return False
    await bot.set_webhook(url, secret_token=secret, allowed_updates=allowed_updates)
    return True


WEBHOOK_PATH = "/webhook"


def build_webhook_app(app: App, *, secret: str | None, path: str = WEBHOOK_PATH) -> Any:
    """The aiohttp application answering Telegram's webhook calls (checks the secret token)."""
    from aiogram.webhook.aiohttp_server import SimpleRequestHandler, setup_application
    from aiohttp import web

    web_app = web.Application()
    SimpleRequestHandler(dispatcher=app.dp, bot=app.bot, secret_token=secret).register(web_app, path=path)
    setup_application(web_app, app.dp, bot=app.bot)
    return web_app


async def run_webhook(settings: Settings) -> None:
    from aiohttp import web

    if not settings.webhook_url:
        raise SystemExit("WEBHOOK_URL is not set")
    app = await create_app(settings)
    secret = settings.webhook_secret.get_secret_value() if settings.webhook_secret else None
    # Serve where Telegram will call: the path of WEBHOOK_URL (a reverse proxy forwards it as is).
    web_app = build_webhook_app(app, secret=secret, path=urlsplit(settings.webhook_url).path or WEBHOOK_PATH)

    async def register(bot: Bot) -> None:
        changed = await ensure_webhook(
            bot, settings.webhook_url or "", secret, app.dp.resolve_used_update_types()
        )
        log.info("webhook %s", "registered" if changed else "already registered")

    app.dp.startup.register(register)
    runner = web.AppRunner(web_app)
    await runner.setup()
    site = web.TCPSite(runner, settings.web_server_host, settings.web_server_port)
    await site.start()
    log.info("webhook server on %s:%s", settings.web_server_host, settings.web_server_port)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):  # docker stop sends SIGTERM: shut down cleanly
        loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
    finally:
        await runner.cleanup()  # runs the dispatcher's shutdown: waits for updates in flight
        await app.close()
