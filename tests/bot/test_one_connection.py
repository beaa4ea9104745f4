"""SQLite's one writer is the engine's one connection (bot.db.engine): sessions get it in the order
they asked, at their first statement, until their transaction ends; a session that runs nothing
waits for nothing; a waiter given up leaves no trace; a wait past the limit is an infrastructure
failure (the update is retried). Tasks are driven by events, not by time."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest
from sqlalchemy import exc, text
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.db import engine as db_engine
from bot.db.engine import create_engine, create_sessionmaker
from bot.db.models import User
from bot.db.outage import is_infrastructure

Sessionmaker = async_sessionmaker[AsyncSession]


def waiter(
    sessionmaker: Sessionmaker, n: int, done: list[int]
) -> tuple[asyncio.Event, Callable[[], Awaitable[None]]]:
    """A session that writes a user row; ``asking`` is set in the step that asks for the connection
    (nothing awaits between it and the pool's queue)."""
    asking = asyncio.Event()

    async def write() -> None:
        async with sessionmaker() as session:
            session.add(User(telegram_id=1000 + n, first_name="Ann"))
            asking.set()
            await session.flush()
            done.append(n)
            await session.commit()

    return asking, write


async def holding(sessionmaker: Sessionmaker) -> AsyncSession:
    """A session holding the connection (a statement run, its transaction open)."""
    holder = sessionmaker()
    await holder.execute(text("SELECT 1"))
    return holder


async def test_sessions_get_the_connection_one_at_a_time_in_the_order_they_asked(
    sessionmaker: Sessionmaker,
) -> None:
    holder = await holding(sessionmaker)
    done: list[int] = []
    waiters = [waiter(sessionmaker, n, done) for n in range(5)]
    tasks = [asyncio.create_task(write()) for _, write in waiters]
    for asking, _ in waiters:
        await asking.wait()
    assert done == []  # all five wait: the holder's transaction is open
    await holder.commit()
    await holder.close()
    await asyncio.gather(*tasks)
    assert done == [0, 1, 2, 3, 4]
    assert sessionmaker.kw["bind"].pool.checkedout() == 0


async def test_a_session_that_ran_no_statement_waits_for_nothing(sessionmaker: Sessionmaker) -> None:
    """An update's session before its handler may run nothing (its user row in memory): its commit
    must not queue behind the session holding the connection."""
    holder = await holding(sessionmaker)
    try:
        async with sessionmaker() as idle:
            await asyncio.wait_for(idle.commit(), timeout=30)  # returns while the connection is held
    finally:
        await holder.close()


async def test_a_waiter_given_up_leaves_the_connection_to_the_next(sessionmaker: Sessionmaker) -> None:
    holder = await holding(sessionmaker)
    done: list[int] = []
    (asking_a, write_a), (asking_b, write_b) = waiter(sessionmaker, 1, done), waiter(sessionmaker, 2, done)
    a = asyncio.create_task(write_a())
    await asking_a.wait()
    b = asyncio.create_task(write_b())
    await asking_b.wait()
    a.cancel()
    with pytest.raises(asyncio.CancelledError):
        await a
    await holder.close()
    await b
    assert done == [2]
    assert sessionmaker.kw["bind"].pool.checkedout() == 0


async def test_a_wait_past_the_limit_is_an_infrastructure_failure(
    migrated_sqlite_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(db_engine, "SQLITE_CONNECTION_WAIT_S", 0.05)
    engine = create_engine(migrated_sqlite_url)
    sessionmaker = create_sessionmaker(engine)
    try:
        holder = await holding(sessionmaker)
        with pytest.raises(exc.TimeoutError) as waited:
            async with sessionmaker() as session:
                await session.execute(text("SELECT 1"))
        assert is_infrastructure(waited.value)  # retried, not answered with an apology
        await holder.close()
    finally:
        await engine.dispose()
