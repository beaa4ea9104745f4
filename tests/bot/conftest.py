"""Fixtures of the bot's tests that talk to the database and Telegram's API objects directly."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from aiogram import Bot
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.db.engine import create_engine, create_sessionmaker

BOT_ID = 42


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
