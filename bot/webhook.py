"""The webhook: Telegram's calls served by aiohttp (`build_webhook_app`), its registration
(`ensure_webhook`), and the runner of `python -m bot webhook` (`run_webhook`).

An update is answered 200 only once it is recorded in the inbox (bot.db.inbox), then handled in the
background. What is not an update gets 400, a body not sent in time 408, a failure to record it or
too many bodies being read at once 503 (Telegram retries); the secret token is checked on every call.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import secrets
import signal
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlsplit

from aiogram import Bot
from aiogram.types import Update
from aiogram.types.update import UpdateTypeLookupError
from aiohttp import web
from pydantic import ValidationError

from bot.app import App, create_app, reach_telegram
from bot.config import Settings
from bot.db.engine import ping
from bot.db.inbox_dispatcher import InboxDispatcher
from bot.received_updates import ReceivedUpdate

log = logging.getLogger(__name__)

WEBHOOK_PATH = "/webhook"
WEBHOOK_HEAD_TIMEOUT_S = 3.0
"""A connection that has not sent a whole request head by then is closed; an idle keep-alive one
too (aiohttp's `keepalive_timeout`, armed when the connection is made; its default is an hour).
Telegram sends a request in one go."""
WEBHOOK_BODY_TIMEOUT_S = 5.0  # a request whose body has not all come by then: 408, closed
# What is left of a request answered before its body was read (401, 408) is not waited for:
# aiohttp's `lingering_time` (10 s by default) would keep reading it after the answer.
WEBHOOK_LINGER_S = 0.0
WEBHOOK_MAX_UNFINISHED = 64
"""Requests whose bodies are still being read, at most; one more is answered 503 at once (Telegram
retries it). Telegram opens at most `max_connections` (40 by default) at a time."""
MAX_TELEGRAM_INT = 2**63 - 1  # ids are 64-bit signed (Bot API: "at most 52 significant bits")
HEALTH_TIMEOUT_S = 3.0  # GET /healthz: a check not answered by then is failing


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


def webhook_runner(web_app: web.Application) -> web.AppRunner:
    """The aiohttp runner serving the webhook, with the time limits above."""
    return web.AppRunner(web_app, keepalive_timeout=WEBHOOK_HEAD_TIMEOUT_S, lingering_time=WEBHOOK_LINGER_S)


def _fits_int64(payload: Any) -> bool:
    """Every integer in the update fits the 64-bit columns it is stored in (iteratively: a body may
    nest deeply)."""
    stack = [payload]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, int) and not -MAX_TELEGRAM_INT - 1 <= item <= MAX_TELEGRAM_INT:
            return False
    return True


def _refuse(status: int, text: str) -> web.Response:
    response = web.Response(text=text, status=status)
    response.force_close()  # what is left of the request is not read
    return response


class _Bodies:
    """Reads request bodies, at most WEBHOOK_MAX_UNFINISHED at a time, each within
    WEBHOOK_BODY_TIMEOUT_S; a refusal is the response to send instead."""

    def __init__(self) -> None:
        self.unfinished = 0

    async def read(self, request: web.Request) -> bytes | web.Response:
        if self.unfinished >= WEBHOOK_MAX_UNFINISHED:
            log.warning("webhook: %d requests still sending their bodies; refused one", self.unfinished)
            return _refuse(503, "Service Unavailable: too many unfinished requests")
        self.unfinished += 1
        try:
            async with asyncio.timeout(WEBHOOK_BODY_TIMEOUT_S):
                return await request.read()
        except TimeoutError:
            log.warning("webhook: a body not sent within %.0f s", WEBHOOK_BODY_TIMEOUT_S)
            return _refuse(408, "Request Timeout")
        finally:
            self.unfinished -= 1


def _parse_update(bot: Bot, body: bytes) -> tuple[Update, dict[str, Any]] | web.Response:
    """The update and its payload, or the 400 to answer."""
    try:
        payload = bot.session.json_loads(body)
    except (ValueError, RecursionError) as e:  # not JSON, not UTF-8, nested past the decoder
        log.warning("webhook: the body is not JSON (%s)", type(e).__name__)
        return web.Response(text="Bad Request: the body is not JSON", status=400)
    try:
        if not isinstance(payload, dict):
            raise TypeError("not an object")
        if not _fits_int64(payload):
            raise ValueError("an integer past 64 bits")
        update = ReceivedUpdate.model_validate(payload, context={"bot": bot})
        update.event_type  # noqa: B018  (raises for an update of no known type)
    except (ValidationError, TypeError, ValueError, RecursionError, UpdateTypeLookupError) as e:
        log.warning("webhook: not an update (%s: %.200s)", type(e).__name__, e)
        return web.Response(text="Bad Request: not a Telegram update", status=400)
    return update, payload


Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def _update_handler(dp: InboxDispatcher, bot: Bot, secret: str | None) -> Handler:
    """POST: Telegram's call with one update."""
    bodies = _Bodies()

    async def on_update(request: web.Request) -> web.StreamResponse:
        given = request.headers.get("X-Telegram-Bot-Api-Secret-Token", "")
        if secret and not secrets.compare_digest(given.encode(), secret.encode()):
            return web.Response(text="Unauthorized", status=401)
        body = await bodies.read(request)
        if isinstance(body, web.Response):
            return body
        parsed = _parse_update(bot, body)
        if isinstance(parsed, web.Response):
            return parsed
        update, payload = parsed
        try:
            await dp.receive_webhook_update(bot, update, payload)
        except Exception:
            log.exception("webhook: could not record update %s", update.update_id)
            return web.Response(text="Service Unavailable", status=503)
        return web.json_response({})

    return on_update


async def _check(checks: dict[str, str], name: str, probe: Callable[[], Awaitable[Any]]) -> None:
    try:
        await asyncio.wait_for(probe(), HEALTH_TIMEOUT_S)
        checks[name] = "ok"
    except Exception as e:
        checks[name] = f"failing: {type(e).__name__}"


def _health_handler(app: App) -> Handler:
    """GET /healthz: the database (and Redis, when the FSM lives there) answer; 503 if not."""
    from aiogram.fsm.storage.redis import RedisStorage  # here: polling without Redis never imports it

    storage = app.dp.storage

    async def healthz(request: web.Request) -> web.Response:
        checks: dict[str, str] = {}
        await _check(checks, "database", lambda: ping(app.engine))
        if isinstance(storage, RedisStorage):
            await _check(checks, "redis", storage.redis.ping)
        healthy = all(value == "ok" for value in checks.values())
        return web.json_response({"ok": healthy, **checks}, status=200 if healthy else 503)

    return healthz


def build_webhook_app(app: App, *, secret: str | None, path: str = WEBHOOK_PATH) -> web.Application:
    """The aiohttp application answering Telegram's webhook calls at ``path`` (checks the secret
    token), the load balancer's ``GET /healthz``, ``GET /metrics`` and the Mini App's page.

    An update is answered 200 only once it is recorded in the inbox (then handled in the background);
    a body that is not JSON (nested past the decoder too) or not an update (an id past 64 bits, a
    shape aiogram does not read) gets 400 and one line in the log, a body not sent within
    WEBHOOK_BODY_TIMEOUT_S 408; a failure to record it 503 (Telegram retries), as does a request
    past WEBHOOK_MAX_UNFINISHED bodies being read. Serve it with `webhook_runner`.
    """
    from aiogram.webhook.aiohttp_server import setup_application

    from bot import metrics  # GET /metrics (Prometheus), README "Metrics"
    from bot.webapp.server import install  # the Mini App's page and API (GET /app, /app/api/…)

    dp = app.inbox_dp
    bot = app.bot

    async def start_inbox(bot: Bot) -> None:
        # Several replicas may share PostgreSQL: only updates whose lease ran out are taken over.
        # SQLite means this one process: whatever is pending is ours.
        await dp.start_inbox(bot, all_of_them=app.engine.dialect.name == "sqlite")

    web_app = web.Application()
    web_app.router.add_post(path, _update_handler(dp, bot, secret))
    web_app.router.add_get("/healthz", _health_handler(app))
    token = app.settings.metrics_token
    metrics.serve(web_app, dp, bot.id, token=token.get_secret_value() if token else None)
    install(web_app, app)
    dp.startup.register(start_inbox)
    setup_application(web_app, dp, bot=bot)
    return web_app


async def run_webhook(settings: Settings) -> None:
    if not settings.webhook_url:
        raise SystemExit("WEBHOOK_URL is not set")
    if (bot := await reach_telegram(settings)) is None:
        return
    app = await create_app(settings, bot=bot)
    secret = settings.webhook_secret.get_secret_value() if settings.webhook_secret else None
    # Serve where Telegram will call: the path of WEBHOOK_URL (a reverse proxy forwards it as is).
    web_app = build_webhook_app(app, secret=secret, path=urlsplit(settings.webhook_url).path or WEBHOOK_PATH)

    async def register(bot: Bot) -> None:
        changed = await ensure_webhook(
            bot, settings.webhook_url or "", secret, app.dp.resolve_used_update_types()
        )
        log.info("webhook %s", "registered" if changed else "already registered")

    app.dp.startup.register(register)
    runner = webhook_runner(web_app)
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
