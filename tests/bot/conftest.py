"""Fixtures of the bot's tests that talk to the database and Telegram's API objects directly."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiogram import Bot, Router
from pydantic import SecretStr
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot import picture_worker
from bot.app import build_dispatcher
from bot.config import Settings
from bot.db.engine import create_engine, create_sessionmaker
from bot.dispatcher import BotDispatcher

BOT_ID = 42


@pytest.fixture(autouse=True)
def picture_workers_at_the_bots_priority(monkeypatch: pytest.MonkeyPatch) -> None:
    """The picture workers these tests start draw at the bot's priority, not below it (`NICENESS`):
    the tests are about what is drawn and when, not about the CPU a crowd leaves a worker. Below
    the pytest workers (``-n 2`` on 2 cores) a worker at nice 10 got so little CPU that its start or
    its render outlasted the bot's timeouts, and the picture was skipped, as in production."""
    monkeypatch.setattr(picture_worker, "NICENESS", 0)


@pytest.fixture
async def sessionmaker(migrated_sqlite_url: str) -> AsyncIterator[async_sessionmaker[AsyncSession]]:
    """The bot's sessionmaker on a migrated SQLite file of the test's own."""
    engine = create_engine(migrated_sqlite_url)
    try:
        yield create_sessionmaker(engine)
    finally:
        await engine.dispose()


@pytest.fixture
async def bot() -> AsyncIterator[Bot]:
    """A Bot that is never asked to reach Telegram (its id is BOT_ID)."""
    bot = Bot(f"{BOT_ID}:TEST")
    try:
        yield bot
    finally:
        await bot.session.close()


def wired_dispatcher(
    sessionmaker: async_sessionmaker[AsyncSession], *routers: Router, **options: Any
) -> BotDispatcher:
    """The dispatcher as the bot wires it (bot.app.build_dispatcher: its storage, middlewares and
    their order) on the sessionmaker's database, with ``routers`` instead of the bot's. ``options``:
    build_dispatcher's (a storage, the users' locks, the inbox's intervals)."""
    url = sessionmaker.kw["bind"].url.render_as_string(hide_password=False)
    settings = Settings(_env_file=None, database_url=url, bot_token=SecretStr(f"{BOT_ID}:TEST"))  # type: ignore[call-arg]
    return build_dispatcher(settings, sessionmaker, routers=routers, **options)
