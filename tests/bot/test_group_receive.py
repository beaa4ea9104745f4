"""Webhook calls arriving together are recorded together (bot.db.group_receive), each still told
whether its update is new; on SQLite and on PostgreSQL."""

from __future__ import annotations

import asyncio
from typing import Any

from aiogram import Bot
from sqlalchemy import event, func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.db import processed_updates
from bot.db.engine import create_engine, create_sessionmaker
from bot.db.group_receive import GroupReceive
from bot.db.inbox import Inbox
from bot.db.models import ProcessedUpdate
from tests.bot import both_backends
from tests.bot.statements import recorded, writes_of
from tests.bot.updates import message_update

db_url = both_backends.db_url
sessionmaker = both_backends.sessionmaker


async def pending(sessionmaker: async_sessionmaker[AsyncSession]) -> int:
    async with sessionmaker() as session:
        return int(await session.scalar(select(func.count()).select_from(ProcessedUpdate)) or 0)


async def test_calls_arriving_together_share_a_receipt(
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    group = GroupReceive(Inbox(sessionmaker))
    bot = Bot("42:TEST")
    try:
        calls = [group.receive(bot, message_update(n, "hi"), {"update_id": n}) for n in range(1, 21)]
        # update 5 delivered twice at once (the balancer retried): new for one call only
        calls.append(group.receive(bot, message_update(5, "hi"), {"update_id": 5}))
        with recorded(sessionmaker) as statements:
            fresh = await asyncio.gather(*calls)
        assert fresh == [True] * 20 + [False]
        # the first call alone, then everything that came meanwhile
        assert 1 <= writes_of(statements, "processed_updates") <= 2
        assert await pending(sessionmaker) == 20
        assert await group.receive(bot, message_update(7, "hi"), {"update_id": 7}) is False  # redelivered
    finally:
        await bot.session.close()


async def test_a_failed_receipt_fails_its_calls(sessionmaker: async_sessionmaker[AsyncSession]) -> None:
    inbox = Inbox(sessionmaker)
    group = GroupReceive(inbox)
    bot = Bot("42:TEST")

    async def broken(*args: object, **kwargs: object) -> set[int]:
        raise OSError("disk full")

    receive = inbox.receive
    inbox.receive = broken  # type: ignore[method-assign]
    try:
        calls = [group.receive(bot, message_update(n, "hi"), {"update_id": n}) for n in (1, 2)]
        results = await asyncio.gather(*calls, return_exceptions=True)
        assert all(isinstance(result, OSError) for result in results)
        inbox.receive = receive  # type: ignore[method-assign]
        assert await group.receive(bot, message_update(1, "hi"), {"update_id": 1}) is True  # retried
    finally:
        await bot.session.close()


async def test_a_receipt_on_postgresql_is_one_round_trip(migrated_postgres_url: str) -> None:
    """No BEGIN and COMMIT around the receipt's one statement: it commits as it runs."""
    engine = create_engine(migrated_postgres_url)
    queries: list[str] = []  # asyncpg logs the simple queries (BEGIN, COMMIT), not prepared statements

    @event.listens_for(engine.sync_engine, "connect")
    def log_queries(dbapi_connection: Any, record: Any) -> None:
        dbapi_connection._connection.add_query_logger(lambda query: queries.append(query.query))

    sessions = create_sessionmaker(engine)
    try:
        assert await Inbox(sessions).receive(42, [(1, {"update_id": 1}), (2, {"update_id": 2})]) == {1, 2}
        async with engine.connect() as other:  # on disk for everyone
            count = await other.scalar(select(func.count()).select_from(ProcessedUpdate))
            await other.commit()
        await asyncio.sleep(0)  # asyncio calls the logger at the loop's next turn (call_soon)
        assert count == 2
        statements = [query.split()[0].rstrip(";").upper() for query in queries]
        assert statements == ["BEGIN", "COMMIT"]  # the count's only
    finally:
        await engine.dispose()


async def test_done_marks_are_one_statement_text_for_any_group_size(
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    """Groups of 3 and of 5 updates write their done marks with the same SQL (compiled once, not a
    statement built for each new size)."""
    inbox = Inbox(sessionmaker)
    await inbox.receive(42, [(n, {"update_id": n}) for n in range(1, 9)])
    texts = []
    for group in ([1, 2, 3], [4, 5, 6, 7, 8]):
        with recorded(sessionmaker) as statements:
            async with sessionmaker() as session, session.begin():
                await processed_updates.finish_updates(session, bot_id=42, update_ids=group)
        texts += statements
    assert len(texts) == 2 and texts[0] == texts[1]
    async with sessionmaker() as session:
        still = await session.scalar(
            select(func.count()).select_from(ProcessedUpdate).where(ProcessedUpdate.payload.is_not(None))
        )
    assert still == 0  # every update of both groups is done
