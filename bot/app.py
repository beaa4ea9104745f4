"""The factory: `create_app` builds the Bot and the Dispatcher from Settings, wired as in production.

Delivery (bot.db.inbox, bot.db.inbox_dispatcher): updates are recorded before Telegram is told they
arrived, handled from memory (each update's unit of work committed after its handler, bot.db.work),
and drained on shutdown before the texts, the storage and the database close. Button presses are
answered early when their handler is slow (bot.callback_answers); a slow answer shows "typing…"
(bot.typing_action). On SQLite the sessions queue for the engine's one connection (bot.db.engine)
and SQLite runs in place (bot.db.inline_sqlite). The runners: bot.polling and bot.webhook.
"""

from __future__ import annotations

import asyncio
import gc
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from aiogram import Bot, Dispatcher, Router
from aiogram.client.default import DefaultBotProperties
from aiogram.client.session.middlewares.base import BaseRequestMiddleware, NextRequestMiddlewareType
from aiogram.client.telegram import PRODUCTION, TelegramAPIServer
from aiogram.enums import ParseMode
from aiogram.exceptions import TelegramRetryAfter
from aiogram.fsm.storage.base import BaseEventIsolation, BaseStorage
from aiogram.methods import Response, TelegramMethod
from aiogram.methods.base import TelegramType
from aiogram_i18n import I18nMiddleware
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from bot.bot_session import JsonBodySession
from bot.callback_answers import TicketCallbackAnswerMiddleware
from bot.config import Settings
from bot.context import DialogContextMiddleware
from bot.db import inbox, inbox_dispatcher
from bot.db.arrivals import FirstContact
from bot.db.engine import create_engine, create_sessionmaker, migrate_if_due, sqlite_file
from bot.db.inbox import Inbox
from bot.db.inbox_dispatcher import InboxDispatcher
from bot.db.middleware import DbSessionMiddleware
from bot.dialog_state import DialogStateMiddleware
from bot.dispatcher import BotDispatcher, check_filters_in_place
from bot.handlers import admin
from bot.handlers import routers as bot_routers
from bot.handlers.commands import set_commands
from bot.i18n import build_i18n
from bot.sent_calls import RedisJournal, ReplaySentCalls
from bot.startup import wait_for_telegram
from bot.storage import SqlAlchemyStorage, UserLocks, build_storage
from bot.typing_action import StopTypingOnAnswer
from core.catalogue.catalog import Catalog, default_catalog, load_catalog
from core.warm import warm_up

log = logging.getLogger(__name__)
GC_THRESHOLDS = (10_000, 20, 10)
"""The cyclic collector's thresholds once start-up is frozen (Python's are 700, 10, 10). An update
allocates a few thousand objects, nearly all freed by reference counting: a young generation this
large is walked far less often, and carries less into the older ones (bench/README.md). It is a few
MB at most; full collections keep their own rule."""


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
    its updates' leases and looks for a dead one's often (bot.db.inbox_dispatcher)."""
    return {
        "heartbeat_s": inbox_dispatcher.HEARTBEAT_S,
        "sweep_interval_s": inbox_dispatcher.REPLICA_SWEEP_INTERVAL_S,
    }


def catalog_for(settings: Settings) -> Catalog:
    return load_catalog(offers_file=settings.offers_file) if settings.offers_file else default_catalog()


def _users_locks(
    settings: Settings, storage: BaseStorage, single_process: bool
) -> tuple[BaseEventIsolation, RedisJournal | None]:
    """One update per user at a time (a double tap must not run the same step twice), and where an
    update's sent calls are journalled. Across replicas (Redis) the lock lives in Redis; the embedded
    database means one process, so a local lock and no journal."""
    if settings.redis_url:  # imported only then: polling on the database never loads Redis
        from bot.redis_fsm import PipelinedRedisStorage

        if isinstance(storage, PipelinedRedisStorage):  # what `build_storage` makes with REDIS_URL
            # replicas: a dead one's locks expire with its leases, renewed by the inbox heartbeat
            ttl = {} if single_process else {"ttl_ms": int(inbox.LEASE.total_seconds() * 1000)}
            journal = RedisJournal(storage.redis, settings.redis_key_prefix, storage.shared)
            return storage.create_isolation(**ttl), journal
    return UserLocks(), None


def build_dispatcher(
    settings: Settings,
    sessionmaker: async_sessionmaker[AsyncSession],
    *,
    storage: BaseStorage | None = None,
    isolation: BaseEventIsolation | None = None,
    i18n: I18nMiddleware | None = None,
    routers: Sequence[Router] | None = None,
    **options: Any,
) -> BotDispatcher:
    """The Dispatcher as the bot runs it: the inbox, the FSM storage (`build_storage` unless given)
    and the users' locks, the database, texts, button-answer and dialog-context middlewares in their
    order, and the bot's routers (``routers`` instead: tests). ``options`` go to BotDispatcher (the
    grace period, the sweep). Its database middleware is ``dp.sessions``; nothing here calls Telegram."""
    single_process = sessionmaker.kw["bind"].dialect.name == "sqlite"  # one process owns the database
    if storage is None:
        storage = build_storage(settings, sessionmaker)
    default_isolation, journal = _users_locks(settings, storage, single_process)
    replicas = {} if single_process else replica_inbox()  # a dead replica's updates taken over in seconds
    dp = BotDispatcher(
        inbox=Inbox(sessionmaker),
        storage=storage,
        events_isolation=default_isolation if isolation is None else isolation,
        catalog=catalog_for(settings),
        settings=settings,
        **{**replicas, **options},
    )
    dp.sent_journal = journal  # replicas: what an update sent, for the one taking it over
    # A step's dialog writes (and with the FSM in the database its state) commit with its done mark,
    # in a group commit; the state in Redis is written right before (bot.redis_fsm).
    sessions = DbSessionMiddleware(sessionmaker, single_process=single_process)
    dp.sessions = sessions
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
    if i18n is None:
        i18n = build_i18n(settings.default_language)
    i18n.setup(dp)  # after the DB middleware: the locale comes from the users table
    dp.callback_query.middleware(TicketCallbackAnswerMiddleware())
    dp.message.outer_middleware(DialogStateMiddleware())  # the dialog state: one read, at most one write
    dp.callback_query.outer_middleware(DialogStateMiddleware())
    dp.message.middleware(DialogContextMiddleware())
    dp.callback_query.middleware(DialogContextMiddleware())
    dp.include_routers(*(bot_routers() if routers is None else routers))
    check_filters_in_place(dp)
    return dp


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
    i18n = build_i18n(settings.default_language)
    dp = build_dispatcher(settings, sessionmaker, i18n=i18n)

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
        # What the first answers would build (texts, patterns, one answer per language), built now:
        # the first user after a start waited ~0.4 s for it.
        warm_up(dp["catalog"])
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
    from bot.pictures import PICTURES  # the picture worker process: started with the bot, stops with it

    if settings.answer_pictures:
        dp.startup.register(PICTURES.start_with_the_bot)  # begun, not waited for: polling starts at once
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
