"""Shared fixtures: real databases for the bot's persistence tests.

PostgreSQL and Redis are the real servers started on the machine (127.0.0.1:5432 user postgres,
127.0.0.1:6379); override with TEST_POSTGRES_URL / TEST_REDIS_URL. Several people and CI may run
the tests at once against the same servers, so each test gets its own PostgreSQL schema and its
own Redis key prefix, both removed afterwards. When a server is unreachable the tests that need it
skip with the reason, except under CI (the CI variable set), where they fail: there the servers
must be up, and a silent skip would hide untested code.
"""

import asyncio
import os
import shutil
import socket
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from urllib.parse import urlsplit

import asyncpg
import pytest
import redis.asyncio as redis

POSTGRES_URL = os.environ.get("TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test")
REDIS_URL = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/0")


def require_server(name: str, url: str) -> None:
    """Skip (or, under CI, fail) the test when the server of ``url`` does not accept connections."""
    parts = urlsplit(url)
    try:
        socket.create_connection((parts.hostname or "127.0.0.1", parts.port or 0), timeout=1).close()
    except OSError as exc:
        reason = f"{name} is not reachable at {parts.hostname}:{parts.port} ({exc})"
        if os.environ.get("CI"):
            pytest.fail(f"{reason}; CI must run these tests against a real {name}", pytrace=False)
        pytest.skip(reason)


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    """A fresh SQLite file database (not yet migrated)."""
    return f"sqlite+aiosqlite:///{tmp_path / 'bot.sqlite3'}"


@pytest.fixture(scope="session")
def migrated_sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An SQLite file migrated to head once per run; copying it is much faster than migrating."""
    from bot.db.engine import migrate

    path = tmp_path_factory.mktemp("template") / "bot.sqlite3"
    asyncio.run(migrate(f"sqlite+aiosqlite:///{path}"))
    return path


@pytest.fixture
def migrated_sqlite_url(tmp_path: Path, migrated_sqlite_template: Path) -> str:
    """A fresh SQLite file database with the current schema."""
    path = tmp_path / "bot.sqlite3"
    shutil.copyfile(migrated_sqlite_template, path)
    return f"sqlite+aiosqlite:///{path}"


@pytest.fixture
async def migrated_postgres_url(postgres_url: str) -> str:
    """A fresh PostgreSQL schema with the current schema."""
    from bot.db.engine import migrate

    await migrate(postgres_url)
    return postgres_url


@pytest.fixture
async def postgres_url() -> AsyncIterator[str]:
    """An empty PostgreSQL schema of its own for this test (dropped afterwards), as an asyncpg URL.

    CREATE DATABASE takes about half a second; a role with a schema of the same name takes
    milliseconds and isolates just as well: PostgreSQL's default search_path ("$user", public)
    makes that schema the one every unqualified table of the role's connections lives in.
    """
    require_server("PostgreSQL", POSTGRES_URL)
    name = f"test_bot_{uuid.uuid4().hex[:12]}"
    admin = await asyncpg.connect(POSTGRES_URL)
    try:
        await admin.execute(f"CREATE ROLE {name} LOGIN")
        await admin.execute(f"CREATE SCHEMA {name} AUTHORIZATION {name}")
        server = urlsplit(POSTGRES_URL)
        yield f"postgresql+asyncpg://{name}@{server.hostname}:{server.port or 5432}{server.path}"
    finally:
        # Connections a failed test left open would block DROP ROLE.
        await admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1", name)
        await admin.execute(f"DROP SCHEMA IF EXISTS {name} CASCADE")
        await admin.execute(f"DROP ROLE IF EXISTS {name}")
        await admin.close()


@pytest.fixture
def redis_url() -> str:
    """The real Redis. Use it only together with ``redis_key_prefix`` so that tests don't collide."""
    require_server("Redis", REDIS_URL)
    return REDIS_URL


@pytest.fixture
async def redis_key_prefix(redis_url: str) -> AsyncIterator[str]:
    """A key prefix unique to this test; every key under it is deleted afterwards."""
    prefix = f"test-bot-{uuid.uuid4().hex[:12]}"
    yield prefix
    client = redis.Redis.from_url(redis_url)
    try:
        keys = [key async for key in client.scan_iter(match=f"{prefix}:*")]
        if keys:
            await client.delete(*keys)
    finally:
        await client.aclose()
