"""Fixtures for database tests that run on both backends: import `db_url` and `sessionmaker` into a
test module (`db_url = both_backends.db_url`, likewise `sessionmaker`) and each of its tests runs
once on a migrated SQLite file and once on a migrated PostgreSQL schema of its own."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.db.engine import create_engine, create_sessionmaker


@pytest.fixture(params=["sqlite", "postgres"])
def db_url(request: pytest.FixtureRequest) -> str:
    return str(request.getfixturevalue(f"migrated_{request.param}_url"))


@pytest.fixture
async def sessionmaker(db_url: str) -> AsyncIterator[async_sessionmaker[AsyncSession]]:
    engine = create_engine(db_url)
    try:
        yield create_sessionmaker(engine)
    finally:
        await engine.dispose()
