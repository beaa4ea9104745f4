"""Engine, sessions and schema migrations for the bot database."""

import asyncio
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from sqlalchemy import event, text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker, create_async_engine

import migrations

# The package's directory, wherever it is installed (a wheel, an editable install, a checkout);
# `__file__` of a package may be None or point elsewhere under some importers.
MIGRATIONS_DIR = Path(next(iter(migrations.__path__)))
# How long an SQLite writer waits for another before "database is locked". Transactions are short
# (committed before every Telegram call, see bot.db.middleware), so this is a safety net only.
SQLITE_BUSY_TIMEOUT_MS = 15_000


def sqlite_file(url: str) -> Path | None:
    """The database file of an SQLite URL; None for other backends and in-memory SQLite."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or not parsed.database or parsed.database == ":memory:":
        return None
    return Path(parsed.database)


def create_engine(url: str) -> AsyncEngine:
    """An engine for ``url``; a file SQLite database gets its directory created and is tuned."""
    if make_url(url).get_backend_name() != "sqlite":
        # pre_ping: a server restart must not break the first update after it.
        return create_async_engine(url, pool_pre_ping=True)
    path = sqlite_file(url)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
    engine = create_async_engine(url)
    event.listen(engine.sync_engine, "connect", _tune_sqlite)
    return engine


def _tune_sqlite(dbapi_connection: Any, connection_record: Any) -> None:
    # WAL lets readers work while one writer writes; foreign keys are off by default in SQLite.
    # synchronous=NORMAL in WAL mode: a commit survives a crash of the process (kill -9), only a power
    # loss may take the last commits back; it saves an fsync per commit.
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


async def ping(engine: AsyncEngine) -> None:
    """Raise unless the database answers (a health check)."""
    async with engine.connect() as connection:
        await connection.execute(text("SELECT 1"))


def create_sessionmaker(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    return async_sessionmaker(engine, expire_on_commit=False)


def alembic_config(url: str) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    # '%' is ConfigParser interpolation syntax; URL-encoded passwords contain it.
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return config


async def migrate(url: str, revision: str = "head") -> None:
    """Upgrade the database at ``url`` to ``revision``, by default the newest schema."""
    # env.py runs its own event loop (asyncio.run), so it must run off this one.
    await asyncio.to_thread(command.upgrade, alembic_config(url), revision)


async def downgrade(url: str, revision: str) -> None:
    await asyncio.to_thread(command.downgrade, alembic_config(url), revision)
