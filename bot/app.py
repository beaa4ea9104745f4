"""One factory building the Bot and the Dispatcher from Settings; runners for polling and webhook.

Delivery (bot.db.inbox): updates are recorded before Telegram is told they arrived, handled from
memory with short transactions (bot.db.middleware), and drained on shutdown before the texts, the
storage and the database close. Button presses are answered within EARLY_ANSWER_S, at once when
the bot is busy (BUSY_UPDATES); a slow answer shows "typing…" (bot.typing_action). On SQLite the
writers take turns (bot.db.turn) and SQLite runs in place (bot.db.inline_sqlite).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import hashlib
import logging
import secrets
import signal
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from aiogram import Bot, Dispatcher, Router
from aiogram.client.default import DefaultBotProperties
from aiogram.client.session.middlewares.base import BaseRequestMiddleware, NextRequestMiddlewareType
from aiogram.client.telegram import PRODUCTION, TelegramAPIServer
from aiogram.dispatcher.flags import get_flag
from aiogram.enums import ParseMode
from aiogram.exceptions import TelegramAPIError, TelegramRetryAfter
from aiogram.fsm.storage.base import BaseEventIsolation
from aiogram.fsm.storage.memory import SimpleEventIsolation
from aiogram.methods import Response, TelegramMethod
from aiogram.methods.base import TelegramType
from aiogram.types import CallbackQuery, TelegramObject, Update
from aiogram.types.update import UpdateTypeLookupError
from aiogram.utils.callback_answer import CallbackAnswer, CallbackAnswerMiddleware
from aiogram_i18n import I18nMiddleware
from pydantic import ValidationError
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.bot_session import JsonBodySession
from bot.config import Settings
from bot.context import DialogContextMiddleware
from bot.db import inbox
from bot.db.arrivals import FirstContact
from bot.db.engine import create_engine, create_sessionmaker, migrate_if_due, ping, sqlite_file
from bot.db.group_receive import GroupReceive
from bot.db.inbox import Inbox, InboxDispatcher
from bot.db.middleware import DbSessionMiddleware, forget_old_updates
from bot.handlers import admin, routers
from bot.handlers.commands import set_commands
from bot.i18n import build_i18n
from bot.sent_calls import RedisJournal, ReplaySentCalls
from bot.startup import wait_for_telegram
from bot.storage import DeferredStateMiddleware, SqlAlchemyStorage, build_storage
from bot.typing_action import TYPING_AFTER_S, StopTypingOnAnswer, start_typing
from core.catalogue.catalog import Catalog, default_catalog, load_catalog

log = logging.getLogger(__name__)
SHUTDOWN_GRACE_S = inbox.SHUTDOWN_GRACE_S
EARLY_ANSWER_S = 0.25
"""A button press whose handler has not answered by then is answered empty (the spinner stops).
A handler answers within ~20-50 ms when the bot is not crowded (its toast is shown); the press of
a user whose previous update still runs waits for it (one update per user at a time), and under a
loaded event loop the timer's own call takes a few hundred ms more: 0.25 s keeps the spinner well
inside a second (0.5 s left it past a second in one 50-user run of bench/bot_load.py)."""
BUSY_UPDATES = 64
"""Updates in hand above which a button press is answered at once, empty (see BotDispatcher); at or
below it the handler answers (with its toast: "this button is outdated", "too many presses") or the
EARLY_ANSWER_S timer does. Measured with bench/bot_load.py on 2 cores: the timer alone keeps every
press within a second up to ~100 updates in hand (50 users: p99 0.30 s; 60 users with a 150 ms Bot API
round trip: p99 0.49 s), not at 200 users with that round trip (341 of 400 within a second; answered
at once: 400 of 400, p99 0.77 s)."""
HEALTH_TIMEOUT_S = 3.0
GC_THRESHOLDS = (10_000, 20, 10)
"""The cyclic collector's thresholds once start-up is frozen (Python's are 700, 10, 10). An update
allocates a few thousand objects (the update's and the answers' pydantic models, texts, rows), nearly
all freed by reference counting: at 700 the youngest generation was walked several times per update
and everything alive then carried into the older ones. Measured with gc.callbacks under
`bench/bot_load.py --users 50` (the whole run, ~4 s of the bot's CPU): 204 young, 18 middle and 1
full collection took 0.31 s; with these, 10 young ones took 0.09 s. A young generation of 10,000
objects is a few MB at most; full collections keep their own rule (a quarter of the long-lived
objects new since the last one)."""


class CallbackTicket:
    """One callback query's answer, given once: by the handler's CallbackAnswer when it finishes, or
    empty by a timer when the handler has not finished within ``EARLY_ANSWER_S`` of the update's
    arrival (waiting for the user's lock, a database connection, a slow Telegram): the button stops
    spinning either way. A text set by a handler after the early answer is not shown."""

    def __init__(self, bot: Bot, query_id: str) -> None:
        self.bot = bot
        self.query_id = query_id
        self.answered = False
        self._timer: asyncio.TimerHandle | None = None
        self._early: asyncio.Task[None] | None = None

    def answer_after(self, delay: float) -> None:
        self._timer = asyncio.get_running_loop().call_later(delay, self._answer_early)

    def answer_now(self) -> None:
        """Answer empty right away, in its own task (the update goes on meanwhile)."""
        self._answer_early()

    def _answer_early(self) -> None:
        if not self.answered:
            self._early = asyncio.create_task(self.answer())

    def cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()

    async def answer(self, **fields: Any) -> None:
        if self.answered:
            if fields.get("text"):
                log.debug("callback query %s answered early; not shown: %r", self.query_id, fields["text"])
            return
        self.answered = True
        self.cancel()
        try:
            await self.bot.answer_callback_query(self.query_id, **fields)
        except TelegramAPIError as e:  # too old, or answered by the errors handler meanwhile
            log.info("callback query %s not answered: %s", self.query_id, e)


class TicketCallbackAnswerMiddleware(CallbackAnswerMiddleware):
    """aiogram's CallbackAnswerMiddleware (handlers set ``callback_answer.text`` etc.), answering
    through the update's CallbackTicket so an early answer and the handler's never both go out."""

    async def __call__(
        self,
        handler: Callable[[TelegramObject, dict[str, Any]], Awaitable[Any]],
        event: TelegramObject,
        data: dict[str, Any],
    ) -> Any:
        if not isinstance(event, CallbackQuery):
            return await handler(event, data)
        ticket: CallbackTicket = data.get("callback_ticket") or CallbackTicket(data["bot"], event.id)
        callback_answer = data["callback_answer"] = self.construct_callback_answer(
            properties=get_flag(data, "callback_answer"),
        )
        if not callback_answer.disabled and callback_answer.answered:
            await ticket.answer(**self._fields(callback_answer))
        # Answered once the handler returns; not when it raises: the update's transaction must roll
        # back, not be committed before this call, and the errors handler answers the query.
        result = await handler(event, data)
        if not callback_answer.disabled and not callback_answer.answered:
            await ticket.answer(**self._fields(callback_answer))
        return result

    @staticmethod
    def _fields(answer: CallbackAnswer) -> dict[str, Any]:
        return {
            "text": answer.text, "show_alert": answer.show_alert, "url": answer.url,
            "cache_time": answer.cache_time,
        }  # fmt: skip


class BotDispatcher(InboxDispatcher):
    """The inbox dispatcher, answering callback queries early when their handling is slow, and
    showing "typing…" when an answer is slow (bot.typing_action). Its FSM middleware leaves reading
    the state to DbSessionMiddleware (one read per update, in its session).

    A button press is answered by its handler (which may show a toast: "this button is outdated",
    "too many presses"), or empty by a timer after EARLY_ANSWER_S. When more than BUSY_UPDATES
    updates are in hand it is answered empty at once, before any database work: its handler would
    wait behind theirs, and the spinner must stop within a second (a toast is then not shown)."""

    def __init__(self, *, typing_after_s: float = TYPING_AFTER_S, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.typing_after_s = typing_after_s
        self.update.outer_middleware.unregister(self.fsm)
        self.fsm = DeferredStateMiddleware(
            storage=self.fsm.storage, strategy=self.fsm.strategy, events_isolation=self.fsm.events_isolation
        )
        self.update.outer_middleware(self.fsm)
        self._forgetting: asyncio.Task[None] | None = None
        self.group_receive = GroupReceive(self.inbox)
        # Told of each update handled and its seconds (bot.metrics, where /metrics is served).
        self.on_handled: Callable[[Update, float], None] | None = None

    async def start_inbox(self, bot: Bot, *, all_of_them: bool, **kwargs: Any) -> None:
        await super().start_inbox(bot, all_of_them=all_of_them, **kwargs)
        # Old de-duplication rows are dropped once polling (or the webhook) is under way, in the
        # background: the first getUpdates need not wait for it, the pending updates go first.
        if self._forgetting is None:
            self._forgetting = asyncio.create_task(self._forget_old_updates())

    async def _forget_old_updates(self) -> None:
        try:
            await forget_old_updates(self.inbox.sessionmaker)
        except Exception:
            log.exception("could not drop old de-duplication rows; the inbox sweep retries later")

    async def drain(self, timeout: float | None = None) -> None:
        if self._forgetting is not None:
            self._forgetting.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._forgetting
            self._forgetting = None  # a dispatcher started again (tests, an embedding app) forgets again
        await super().drain(timeout)

    async def receive_webhook_update(self, bot: Bot, update: Update, payload: dict[str, Any]) -> bool:
        """As the inbox's, with the calls arriving together recorded together (bot.db.group_receive)."""
        if await self.group_receive.receive(bot, update, payload):
            self.handle_in_background(bot, update, fresh=True)
            return True
        log.info("Dropping update %s: already received", update.update_id)
        return False

    async def feed_update(self, bot: Bot, update: Update, **kwargs: Any) -> Any:
        if "callback_ticket" in kwargs:
            return await super().feed_update(bot, update, **kwargs)
        started = time.perf_counter()
        typing = start_typing(bot, update, self.typing_after_s)
        ticket = None
        if update.callback_query is not None:
            ticket = kwargs["callback_ticket"] = CallbackTicket(bot, update.callback_query.id)
            if len(self.handling) > BUSY_UPDATES:
                ticket.answer_now()
            else:
                ticket.answer_after(EARLY_ANSWER_S)
        try:
            return await super().feed_update(bot, update, **kwargs)
        finally:
            if ticket is not None:
                ticket.cancel()
            if typing is not None:
                typing.stop()
            if self.on_handled is not None:
                self.on_handled(update, time.perf_counter() - started)


class RetryAfterMiddleware(BaseRequestMiddleware):
    """Telegram's flood control answers 429 with `retry_after`; aiogram raises, we wait and retry."""

    def __init__(self, attempts: int = 3, max_wait_s: float = 30.0) -> None:
        self.attempts = attempts
        self.max_wait_s = max_wait_s
        # aiogram builds `Response[T]` for every call; pydantic caches such classes weakly, so after a
        # garbage collection each is rebuilt (~5 ms). Held here, each is built once.
        self._response_types: dict[Any, Any] = {}

    async def __call__(
        self,
        make_request: NextRequestMiddlewareType[TelegramType],
        bot: Bot,
        method: TelegramMethod[TelegramType],
    ) -> Response[TelegramType]:
        returning = method.__returning__
        if returning not in self._response_types:
            self._response_types[returning] = Response[returning]  # type: ignore[valid-type]
        for attempt in range(1, self.attempts + 1):
            try:
                return await make_request(bot, method)
            except TelegramRetryAfter as e:
                if attempt == self.attempts or e.retry_after > self.max_wait_s:
                    raise
                log.warning("flood control on %s: retrying in %s s", type(method).__name__, e.retry_after)
                await asyncio.sleep(e.retry_after)
        raise AssertionError("unreachable")


def check_filters_in_place(router: Router) -> int:
    """Run the routers' synchronous filters (``F.text``, ``F.data == …``, plain predicates) in place.

    aiogram calls every synchronous filter through ``asyncio.to_thread`` (CallableObject.call in
    aiogram/dispatcher/event/handler.py), meant for blocking callables: a thread hop per filter per
    handler tried, each waiting for the GIL of a busy loop. Filters are predicates over the update,
    microseconds of work. Returns how many were changed."""
    changed = 0
    for each in router.chain_tail:
        for observer in each.observers.values():
            for handler in [observer._handler, *observer.handlers]:
                for event_filter in handler.filters or ():
                    if not event_filter.awaitable:
                        event_filter.callback = _in_place(event_filter.callback)
                        event_filter.awaitable = True
                        changed += 1
    return changed


def _in_place(callback: Callable[..., Any]) -> Callable[..., Awaitable[Any]]:
    async def call(*args: Any, **kwargs: Any) -> Any:
        return callback(*args, **kwargs)

    return call


@dataclass
class App:
    bot: Bot
    dp: Dispatcher
    engine: AsyncEngine
    settings: Settings
    i18n: I18nMiddleware

    @property
    def inbox_dp(self) -> InboxDispatcher:
        assert isinstance(self.dp, InboxDispatcher)
        return self.dp

    async def close(self) -> None:
        await self.dp.storage.close()
        await self.bot.session.close()
        await self.engine.dispose()


def build_bot(settings: Settings, token: str | None = None) -> Bot:
    """A Bot for Telegram, or for a self-hosted / fake Bot API server at TELEGRAM_API_URL."""
    secret = token or (settings.bot_token.get_secret_value() if settings.bot_token else None)
    if not secret:
        raise SystemExit("BOT_TOKEN is not set (try `python -m bot sandbox` to chat without one)")
    session = JsonBodySession()
    if settings.telegram_api_url.rstrip("/") != PRODUCTION.base.split("/bot")[0]:
        session = JsonBodySession(api=TelegramAPIServer.from_base(settings.telegram_api_url))
    return Bot(
        secret,
        session=session,
        default=DefaultBotProperties(parse_mode=ParseMode.HTML, link_preview_is_disabled=True),
    )


def commands_marker(database_url: str) -> Path | None:
    """The file next to an SQLite database keeping what setMyCommands last set (None: other databases,
    whose replicas set the menus at every start, as before)."""
    path = sqlite_file(database_url)
    return path.with_name(path.name + ".commands") if path is not None else None


def replica_inbox() -> dict[str, float]:
    """The dispatcher's settings where several replicas share the database (PostgreSQL): each renews
    its updates' leases and looks for a dead one's often (bot.db.inbox)."""
    return {"heartbeat_s": inbox.HEARTBEAT_S, "sweep_interval_s": inbox.REPLICA_SWEEP_INTERVAL_S}


def catalog_for(settings: Settings) -> Catalog:
    return load_catalog(offers_file=settings.offers_file) if settings.offers_file else default_catalog()


async def create_app(settings: Settings, *, bot: Bot | None = None) -> App:
    """Bot + Dispatcher wired as in production; the embedded SQLite database is migrated first."""
    bot = bot or build_bot(settings)
    # Outermost first: a retried update's calls answered from before, then 429s are waited out.
    bot.session.middleware(ReplaySentCalls())  # a retried update does not say twice what it said
    bot.session.middleware(RetryAfterMiddleware())
    bot.session.middleware(StopTypingOnAnswer())
    if sqlite_file(settings.database_url) is not None:
        await migrate_if_due(settings.database_url)
    engine = create_engine(settings.database_url)
    sessionmaker = create_sessionmaker(engine)
    storage = build_storage(settings, sessionmaker)
    # One update per user at a time: a double tap must not run the same step twice. Across replicas
    # (Redis) the lock lives in Redis; the embedded database means one process, so a local lock.
    isolation: BaseEventIsolation = SimpleEventIsolation()
    journal = None
    single_process = engine.dialect.name == "sqlite"  # the embedded database: one process owns it
    if settings.redis_url:  # imported only then: polling on the database never loads Redis
        from aiogram.fsm.storage.redis import RedisStorage

        if isinstance(storage, RedisStorage):
            # replicas: a dead one's locks expire with its leases, renewed by the inbox heartbeat
            ttl = {} if single_process else {"ttl_ms": int(inbox.LEASE.total_seconds() * 1000)}
            isolation = storage.create_isolation(**ttl)
            journal = RedisJournal(storage.redis, settings.redis_key_prefix)
    replicas = {} if single_process else replica_inbox()  # a dead replica's updates taken over in seconds
    dp = BotDispatcher(
        inbox=Inbox(sessionmaker),
        storage=storage,
        events_isolation=isolation,
        catalog=catalog_for(settings),
        settings=settings,
        **replicas,
    )
    dp.sent_journal = journal  # replicas: what an update sent, for the one taking it over
    # A step's dialog writes (and with the FSM in the database its state) commit with its done mark,
    # in a group commit; the state in Redis is written right before (bot.redis_fsm).
    sessions = DbSessionMiddleware(sessionmaker, single_process=single_process)
    dp.update.outer_middleware(sessions)
    from bot.db.availability import REFRESH_S, LiveAvailability  # /offers off|on over the offers file

    availability = dp[admin.AVAILABILITY_KEY] = LiveAvailability(
        sessionmaker, None if single_process else REFRESH_S
    )
    dp.startup.register(availability.start)
    dp.shutdown.register(availability.stop)
    if single_process and isinstance(storage, SqlAlchemyStorage):
        # New senders' rows and FSM records at receipt, for the whole batch (bot.db.arrivals).
        dp.inbox.prepare = FirstContact(sessions, storage, dp.fsm)
    i18n = build_i18n(settings.default_language)
    i18n.setup(dp)  # after the DB middleware: the locale comes from the users table
    dp.callback_query.middleware(TicketCallbackAnswerMiddleware())
    dp.message.middleware(DialogContextMiddleware())
    dp.callback_query.middleware(DialogContextMiddleware())
    dp.include_routers(*routers())
    check_filters_in_place(dp)

    async def on_startup(bot: Bot) -> None:
        await set_commands(
            bot,
            i18n.core.get,
            settings.default_language,
            settings.admin_ids,
            admin.ADMIN_COMMANDS,
            last_set=commands_marker(settings.database_url),
        )
        # What start-up built (aiogram's and pydantic's models, the texts) lives as long as the
        # process: out of the collector's way, no full collection walks it (pauses of ~300 ms).
        # `python -m bot` starts with the collector off (bot.__main__): what it would free now is
        # ~1 MB of import-time cycles, not worth a walk over it all (~0.2 s) before the first poll,
        # so that is frozen too. Started otherwise (tests, the sandbox), collect first as before.
        if gc.isenabled():
            gc.collect()
        gc.freeze()
        gc.set_threshold(*GC_THRESHOLDS)
        gc.enable()

    dp.startup.register(on_startup)
    from bot import crm  # the CRM push (bot.crm): beside the cards, through the same outbox
    from bot.outbox import LeadOutbox  # the lead outbox: pending leads to the sales chat, start to shutdown

    def sales_tr(key: str, **args: object) -> str:
        return i18n.core.get(key, settings.default_language, **args)

    crm_push = None
    if crm_destinations := crm.destinations(settings, sales_tr):
        from bot.crm.push import CrmPush

        crm_push = CrmPush(
            sessionmaker, crm_destinations, tr=sales_tr, lang=settings.default_language,
            single_process=engine.dialect.name == "sqlite", admin_ids=settings.admin_ids,
        )  # fmt: skip
    outbox = dp["lead_outbox"] = LeadOutbox.for_engine(
        engine, sessionmaker, settings.sales_chat_id, settings.sales_topic_id,
        admin_ids=settings.admin_ids, tr=sales_tr, crm=crm_push,
    )  # fmt: skip
    dp.startup.register(outbox.start)
    dp.shutdown.register(outbox.stop)
    from bot.reminders import LeadReminders  # unclaimed leads: the sales chat reminded, then the admins

    reminders = dp["lead_reminders"] = LeadReminders(
        sessionmaker, settings.sales_chat_id, settings.sales_topic_id,
        remind_after=timedelta(minutes=settings.lead_reminder_minutes),
        escalate_after=timedelta(minutes=settings.lead_escalate_minutes),
        admin_ids=settings.admin_ids, tr=outbox.tr or (lambda key, **args: key),
    )  # fmt: skip
    dp.startup.register(reminders.start)
    dp.shutdown.register(reminders.stop)
    from bot.pictures import PICTURES  # the picture worker process, if one was started, stops with the bot

    dp.shutdown.register(PICTURES.close)
    # Shutdown: the dispatcher drains the updates in hand before any shutdown handler (i18n's) runs.
    return App(bot=bot, dp=dp, engine=engine, settings=settings, i18n=i18n)


async def reach_telegram(settings: Settings) -> Bot | None:
    """The Bot, once Telegram answers (waited for, `bot.startup`); None: SIGTERM came first."""
    bot = build_bot(settings)
    reached = False
    try:
        reached = await wait_for_telegram(bot, settings.telegram_api_url)
        return bot if reached else None
    finally:
        if not reached:
            await bot.session.close()


async def run_polling(settings: Settings) -> None:
    if (bot := await reach_telegram(settings)) is None:
        return
    app = await create_app(settings, bot=bot)
    page = None
    try:
        if settings.webapp_url:  # the Mini App's page on a server of its own (bot.webapp)
            from bot.webapp.server import serve

            page = await serve(app, settings.web_server_host, settings.webapp_port)
        await app.bot.delete_webhook(drop_pending_updates=False)
        await app.dp.start_polling(app.bot, allowed_updates=app.dp.resolve_used_update_types())
    finally:
        if page is not None:
            await page.cleanup()
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
WEBHOOK_HEAD_TIMEOUT_S = 3.0
"""A connection that has not sent a whole request head by then is closed; an idle keep-alive one
too. aiohttp's `keepalive_timeout` (web_protocol.RequestHandler: armed at `connection_made`, it
closes a connection still waiting for its request, half-sent or idle). Telegram sends a request in
one go; aiohttp's default (3630 s) let 300 half-sent requests stay open."""
WEBHOOK_BODY_TIMEOUT_S = 5.0  # a request whose body has not all come by then: 408, closed
# What is left of a request answered before its body was read (401, 408) is not waited for:
# aiohttp's `lingering_time` (10 s by default) would keep reading it after the answer.
WEBHOOK_LINGER_S = 0.0
WEBHOOK_MAX_UNFINISHED = 64
"""Requests whose bodies are still being read, at most; one more is answered 503 at once (Telegram
retries it). Telegram opens at most `max_connections` (40 by default) at a time."""
MAX_TELEGRAM_INT = 2**63 - 1  # ids are 64-bit signed (Bot API: "at most 52 significant bits")


def webhook_runner(web_app: Any) -> Any:
    """The aiohttp runner serving the webhook, with the time limits above."""
    from aiohttp import web

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


def build_webhook_app(app: App, *, secret: str | None, path: str = WEBHOOK_PATH) -> Any:
    """The aiohttp application answering Telegram's webhook calls (checks the secret token) and the
    load balancer's ``GET /healthz``.

    An update is answered 200 only once it is recorded in the inbox (then handled in the background);
    a body that is not JSON (nested past the decoder too) or not an update (an id past 64 bits, a
    shape aiogram does not read) gets 400 and one line in the log, a body not sent within
    WEBHOOK_BODY_TIMEOUT_S 408; a failure to record it 503 (Telegram retries), as does a request
    past WEBHOOK_MAX_UNFINISHED bodies being read. Serve it with `webhook_runner`.
    """
    from aiogram.fsm.storage.redis import RedisStorage  # here: polling without Redis never imports it
    from aiogram.webhook.aiohttp_server import setup_application
    from aiohttp import web

    dp = app.inbox_dp
    bot = app.bot
    unfinished = 0

    def refuse(status: int, text: str) -> web.Response:
        response = web.Response(text=text, status=status)
        response.force_close()  # what is left of the request is not read
        return response

    async def read_body(request: web.Request) -> bytes | web.Response:
        nonlocal unfinished
        if unfinished >= WEBHOOK_MAX_UNFINISHED:
            log.warning("webhook: %d requests still sending their bodies; refused one", unfinished)
            return refuse(503, "Service Unavailable: too many unfinished requests")
        unfinished += 1
        try:
            async with asyncio.timeout(WEBHOOK_BODY_TIMEOUT_S):
                return await request.read()
        except TimeoutError:
            log.warning("webhook: a body not sent within %.0f s", WEBHOOK_BODY_TIMEOUT_S)
            return refuse(408, "Request Timeout")
        finally:
            unfinished -= 1

    async def on_update(request: web.Request) -> web.StreamResponse:
        given = request.headers.get("X-Telegram-Bot-Api-Secret-Token", "")
        if secret and not secrets.compare_digest(given.encode(), secret.encode()):
            return web.Response(text="Unauthorized", status=401)
        body = await read_body(request)
        if isinstance(body, web.Response):
            return body
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
            update = Update.model_validate(payload, context={"bot": bot})
            update.event_type  # noqa: B018  (raises for an update of no known type)
        except (ValidationError, TypeError, ValueError, RecursionError, UpdateTypeLookupError) as e:
            log.warning("webhook: not an update (%s: %.200s)", type(e).__name__, e)
            return web.Response(text="Bad Request: not a Telegram update", status=400)
        try:
            await dp.receive_webhook_update(bot, update, payload)
        except Exception:
            log.exception("webhook: could not record update %s", update.update_id)
            return web.Response(text="Service Unavailable", status=503)
        return web.json_response({})

    async def healthz(request: web.Request) -> web.Response:
        checks: dict[str, str] = {}
        try:
            await asyncio.wait_for(ping(app.engine), HEALTH_TIMEOUT_S)
            checks["database"] = "ok"
        except Exception as e:
            checks["database"] = f"failing: {type(e).__name__}"
        if isinstance(dp.storage, RedisStorage):
            try:
                await asyncio.wait_for(dp.storage.redis.ping(), HEALTH_TIMEOUT_S)
                checks["redis"] = "ok"
            except Exception as e:
                checks["redis"] = f"failing: {type(e).__name__}"
        healthy = all(value == "ok" for value in checks.values())
        return web.json_response({"ok": healthy, **checks}, status=200 if healthy else 503)

    async def start_inbox(bot: Bot) -> None:
        # Several replicas may share PostgreSQL: only updates whose lease ran out are taken over.
        # SQLite means this one process: whatever is pending is ours.
        await dp.start_inbox(bot, all_of_them=app.engine.dialect.name == "sqlite")

    web_app = web.Application()
    web_app.router.add_post(path, on_update)
    web_app.router.add_get("/healthz", healthz)
    from bot import metrics  # GET /metrics (Prometheus), README "Metrics"

    token = app.settings.metrics_token
    metrics.serve(web_app, dp, bot.id, token=token.get_secret_value() if token else None)
    from bot.webapp.server import install  # the Mini App's page and API (GET /app, /app/api/…)

    install(web_app, app)
    dp.startup.register(start_inbox)
    setup_application(web_app, dp, bot=bot)
    return web_app


async def run_webhook(settings: Settings) -> None:
    from aiohttp import web

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
