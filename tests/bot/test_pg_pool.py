"""The PostgreSQL pool (bot.db.engine.create_engine): no ping at checkout, yet a connection the server
closed (a restart, `pg_terminate_backend`) is replaced, not handed to the next update."""

from __future__ import annotations

import asyncio

import asyncpg
from sqlalchemy import event, text

from bot.db.engine import create_engine, create_sessionmaker, statements_commit_alone
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


async def test_statements_commit_alone_on_postgresql(migrated_postgres_url: str) -> None:
    """Each statement commits as it runs: visible to another connection before the session ends,
    with no BEGIN or COMMIT sent (asyncpg logs its simple queries, not prepared statements)."""
    engine = create_engine(migrated_postgres_url)
    queries: list[str] = []
    event.listen(
        engine.sync_engine,
        "connect",
        lambda dbapi_connection, record: dbapi_connection._connection.add_query_logger(
            lambda query: queries.append(query.query)
        ),
    )
    sessions = create_sessionmaker(engine)
    try:
        async with sessions() as session:
            await statements_commit_alone(session)
            insert = (
                "INSERT INTO offer_availability (offer_id, availability, changed_at) VALUES ('a', 'x', now())"
            )
            await session.execute(text(insert))
            async with engine.connect() as other:
                seen = await other.scalar(text("SELECT count(*) FROM offer_availability"))
                await other.rollback()
            await session.rollback()  # too late: it committed as it ran
        await asyncio.sleep(0)  # asyncio calls the logger at the loop's next turn (call_soon)
        statements = [query.split()[0].rstrip(";").upper() for query in queries]
        async with engine.connect() as later:
            kept = await later.scalar(text("SELECT count(*) FROM offer_availability"))
        assert seen == 1 and kept == 1
        assert statements == ["BEGIN", "ROLLBACK"]  # the other connection's only
    finally:
        await engine.dispose()
