"""The PostgreSQL pool (bot.db.engine.create_engine): no ping at checkout, yet a connection the server
closed (a restart, `pg_terminate_backend`) is replaced, not handed to the next update."""

from __future__ import annotations

import asyncio

import asyncpg
from sqlalchemy import event, text

from bot.db.engine import create_engine
from tests.conftest import POSTGRES_URL


async def test_a_connection_the_server_closed_is_replaced_at_checkout(postgres_url: str) -> None:
    engine = create_engine(postgres_url)
    try:
        async with engine.connect() as connection:
            pid = await connection.scalar(text("SELECT pg_backend_pid()"))
            pooled = (await connection.get_raw_connection()).driver_connection
        assert isinstance(pooled, asyncpg.Connection)
        admin = await asyncpg.connect(POSTGRES_URL)
        try:
            assert await admin.fetchval("SELECT pg_terminate_backend($1)", pid) is True
        finally:
            await admin.close()
        # Terminated, and the pooled connection has seen its socket closed (the event the pool's
        # checkout listener reads); gone from the server's list is not enough: the loop may not
        # have read the close yet.
        while not pooled.is_closed():
            await asyncio.sleep(0.01)
        async with engine.connect() as connection:  # the pooled connection was the terminated one
            assert await connection.scalar(text("SELECT pg_backend_pid()")) != pid
        assert engine.pool.checkedout() == 0
    finally:
        await engine.dispose()


async def test_no_ping_at_checkout(postgres_url: str) -> None:
    """A checkout costs no round trip: the statements the server saw are only the update's."""
    engine = create_engine(postgres_url)
    assert engine.pool._pre_ping is False
    await engine.dispose()


async def test_connections_a_burst_opened_are_kept_for_the_next(postgres_url: str) -> None:
    """A connection closed on return costs the next burst a connect, an authentication and its
    statements prepared again: what a burst of 30 opened, the next burst of 30 finds open."""
    engine = create_engine(postgres_url)
    opened: list[object] = []
    event.listen(engine.sync_engine, "connect", lambda dbapi_connection, record: opened.append(record))
    burst = asyncio.Barrier(30)

    async def update() -> None:
        async with engine.connect() as connection:
            await connection.execute(text("SELECT 1"))
            await burst.wait()  # all 30 hold a connection at once

    try:
        await asyncio.gather(*(update() for _ in range(30)))
        assert len(opened) == 30
        await asyncio.gather(*(update() for _ in range(30)))
        assert len(opened) == 30  # none opened again
    finally:
        await engine.dispose()
