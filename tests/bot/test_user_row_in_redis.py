"""With PostgreSQL and the FSM in Redis (the webhook replicas), a user's row of the users table is kept
in their private chat's Redis record, read with the lock (bot.redis_state): a known user's update reads
no row from the database; a changed name, an old ``last_seen_at`` or a change made by the update
itself (the language) are written through. Statements counted by tests.bot.statements."""

import json
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import pytest
from aiogram import Bot, Router
from aiogram.fsm.storage.base import DefaultKeyBuilder, StorageKey
from aiogram.types import Message
from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.db.engine import create_engine, create_sessionmaker
from bot.db.models import User, utc_now
from bot.db.work import UpdateWork
from bot.dispatcher import BotDispatcher
from bot.redis_fsm import PipelinedRedisStorage
from tests.bot.conftest import wired_dispatcher
from tests.bot.statements import reads_of, recorded, writes_of
from tests.bot.updates import USER_ID, message_update


@pytest.fixture
async def pg_sessionmaker(migrated_postgres_url: str) -> AsyncIterator[async_sessionmaker[AsyncSession]]:
    engine = create_engine(migrated_postgres_url)
    try:
        yield create_sessionmaker(engine)
    finally:
        await engine.dispose()


@pytest.fixture
async def storage(redis_url: str, redis_key_prefix: str) -> AsyncIterator[PipelinedRedisStorage]:
    storage = PipelinedRedisStorage.from_url(
        redis_url, key_builder=DefaultKeyBuilder(prefix=redis_key_prefix, with_destiny=True)
    )
    try:
        yield storage
    finally:
        await storage.close()


def dispatcher(
    sessionmaker: async_sessionmaker[AsyncSession], storage: PipelinedRedisStorage, seen: list[Any]
) -> BotDispatcher:
    router = Router()

    @router.message()
    async def remember(message: Message, db_user: User | None, work: UpdateWork) -> None:
        assert db_user is not None
        seen.append((db_user.id, db_user.first_name, db_user.language))
        if message.text and message.text.startswith("/lang "):  # as bot.i18n sets it
            language = message.text.removeprefix("/lang ")
            await work.write(_set_language, db_user.telegram_id, language)
            db_user.language = language

    return wired_dispatcher(sessionmaker, router, storage=storage, isolation=storage.create_isolation())


async def _set_language(session: AsyncSession, telegram_id: int, language: str) -> None:
    await session.execute(update(User).where(User.telegram_id == telegram_id).values(language=language))


async def test_a_known_users_update_reads_no_row_and_a_change_is_written_through(
    pg_sessionmaker: async_sessionmaker[AsyncSession], storage: PipelinedRedisStorage, bot: Bot
) -> None:
    seen: list[Any] = []
    dp = dispatcher(pg_sessionmaker, storage, seen)
    with recorded(pg_sessionmaker) as first:
        await dp.feed_update(bot, message_update(1, "hello"))
    assert writes_of(first, "users") == 1  # first contact: the row is made
    with recorded(pg_sessionmaker) as known:
        await dp.feed_update(bot, message_update(2, "again"))
    assert reads_of(known, "users") == writes_of(known, "users") == 0  # the row came with the lock
    with recorded(pg_sessionmaker) as changing:
        await dp.feed_update(bot, message_update(3, "/lang en"))
    assert reads_of(changing, "users") == 0
    with recorded(pg_sessionmaker) as after:
        await dp.feed_update(bot, message_update(4, "and now?"))
    assert reads_of(after, "users") == writes_of(after, "users") == 0
    row_id = seen[0][0]
    assert seen == [
        (row_id, "Ann", None),
        (row_id, "Ann", None),
        (row_id, "Ann", None),
        (row_id, "Ann", "en"),
    ]


async def test_what_telegram_says_changed_or_an_old_last_seen_refreshes_the_row(
    pg_sessionmaker: async_sessionmaker[AsyncSession], storage: PipelinedRedisStorage, bot: Bot
) -> None:
    seen: list[Any] = []
    dp = dispatcher(pg_sessionmaker, storage, seen)
    await dp.feed_update(bot, message_update(1, "hello"))
    with recorded(pg_sessionmaker) as renamed:
        await dp.feed_update(bot, message_update(2, "hi", first_name="Anna"))
    assert writes_of(renamed, "users") == 1
    assert seen[-1][1] == "Anna"
    # As if last seen an hour ago: the row kept in Redis says so too.
    async with pg_sessionmaker() as session, session.begin():
        await session.execute(
            update(User)
            .where(User.telegram_id == USER_ID)
            .values(last_seen_at=utc_now() - timedelta(hours=1))
        )
    key = f"{storage.key_builder.build(StorageKey(bot.id, USER_ID, USER_ID))}:user"
    kept = json.loads(await storage.redis.get(key))
    kept["last_seen_at"] = str(utc_now() - timedelta(hours=1))
    await storage.redis.set(key, json.dumps(kept))
    with recorded(pg_sessionmaker) as stale:
        await dp.feed_update(bot, message_update(3, "still there"))
    assert writes_of(stale, "users") == 1  # last_seen_at refreshed, and the row kept again
    with recorded(pg_sessionmaker) as known:
        await dp.feed_update(bot, message_update(4, "and now?"))
    assert reads_of(known, "users") == writes_of(known, "users") == 0


@pytest.mark.parametrize(
    "kept", [b"not json", b'{"telegram_id": 1}', None], ids=["not JSON", "not a whole row", "times missing"]
)
async def test_a_kept_row_that_does_not_read_is_refreshed_from_the_database(
    pg_sessionmaker: async_sessionmaker[AsyncSession],
    storage: PipelinedRedisStorage,
    bot: Bot,
    kept: bytes | None,
) -> None:
    seen: list[Any] = []
    dp = dispatcher(pg_sessionmaker, storage, seen)
    await dp.feed_update(bot, message_update(1, "/lang en"))
    key = f"{storage.key_builder.build(StorageKey(bot.id, USER_ID, USER_ID))}:user"
    if kept is None:  # a whole row, its times gone
        row = json.loads(await storage.redis.get(key))
        kept = json.dumps({**row, "created_at": None, "last_seen_at": None}).encode()
    await storage.redis.set(key, kept)
    with recorded(pg_sessionmaker) as again:
        await dp.feed_update(bot, message_update(2, "and now?"))
    assert writes_of(again, "users") == 1  # refreshed from the database, and kept again
    assert seen[-1][2] == "en"  # the language the database has
    with recorded(pg_sessionmaker) as known:
        await dp.feed_update(bot, message_update(3, "still there"))
    assert reads_of(known, "users") == writes_of(known, "users") == 0
