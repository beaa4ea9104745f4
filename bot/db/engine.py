"""Engine, sessions and schema migrations for the bot database."""

from __future__ import annotations

import ast
import asyncio
import contextlib
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import event, exc, text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker, create_async_engine

import migrations
from bot.db.inline_sqlite import inline_creator

if TYPE_CHECKING:
    from alembic.config import Config

# The package's directory, wherever it is installed (a wheel, an editable install, a checkout);
# `__file__` of a package may be None or point elsewhere under some importers.
MIGRATIONS_DIR = Path(next(iter(migrations.__path__)))
# How long an SQLite writer waits for another process's before "database is locked". This process
# has one connection (below), so this is a safety net only (`python -m bot stats`, a migration).
SQLITE_BUSY_TIMEOUT_MS = 15_000
SQLITE_CONNECTION_WAIT_S = 30.0
"""SQLite's one writer is the engine's one connection: a session checks it out at its first statement
and gives it back when its transaction ends (commit, rollback, close), and the sessions waiting for it
get it in the order they asked (the pool's FIFO queue). No handler holds a transaction (bot.db.work),
so a wait is for the inbox's receipt, the writer's group commit or a short read; one past this many
seconds raises `sqlalchemy.exc.TimeoutError`, an infrastructure failure: the update is retried
(bot.db.outage)."""
# PostgreSQL (the webhook replicas): an update holds a connection from its first statement to its
# commit, the inbox's receipt and the group commit one each. Every connection opened is kept: an
# overflow connection is closed on return, and a new one costs a connect, an authentication and its
# statements prepared again (with 20 kept + 20 overflow, a 100-user run opened 70 connections, ~7 %
# of the replica's CPU: bench/README.md). 2 replicas x 40 stay under PostgreSQL's default
# max_connections (100).
PG_POOL_SIZE = 40
PG_POOL_OVERFLOW = 0
PG_POOL_RECYCLE_S = 1800
"""A connection older than this is replaced at checkout: one a firewall dropped silently (no FIN,
so asyncpg cannot see it closed, `_closed_by_server`) is not kept forever."""


def sqlite_file(url: str) -> Path | None:
    """The database file of an SQLite URL; None for other backends and in-memory SQLite."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or not parsed.database or parsed.database == ":memory:":
        return None
    return Path(parsed.database)


def create_engine(url: str) -> AsyncEngine:
    """An engine for ``url``; a file SQLite database gets its directory created and is tuned."""
    if make_url(url).get_backend_name() != "sqlite":
        engine = create_async_engine(
            url, pool_size=PG_POOL_SIZE, max_overflow=PG_POOL_OVERFLOW, pool_recycle=PG_POOL_RECYCLE_S
        )
        if engine.dialect.driver == "asyncpg":
            event.listen(engine.sync_engine, "checkout", _closed_by_server)
        return engine
    path = sqlite_file(url)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
    # One connection, kept (see SQLITE_CONNECTION_WAIT_S): SQLite has one writer at a time, and it
    # runs on the event loop (bot.db.inline_sqlite), where a second connection waiting inside
    # SQLite's busy handler would block the loop.
    engine = create_async_engine(
        url, pool_size=1, max_overflow=0, pool_timeout=SQLITE_CONNECTION_WAIT_S,
        async_creator=inline_creator(url),
    )  # fmt: skip
    event.listen(engine.sync_engine, "connect", _tune_sqlite)
    return engine


def _closed_by_server(dbapi_connection: Any, connection_record: Any, connection_proxy: Any) -> None:
    """A server restart must not break the first update after it, without a ping at every checkout
    (``pool_pre_ping``: with asyncpg a BEGIN, a ";" and a ROLLBACK, three round trips, 3 of the 8.5-10
    statements of an update on the webhook replicas). A restarted (or terminated) backend closes the
    socket; asyncpg's protocol sees that by itself (``Connection.is_closed()``, no round trip), and
    the pool then replaces the connection (``DisconnectionError``: SQLAlchemy's documented way for a
    checkout listener to ask for a fresh connection)."""
    connection = getattr(dbapi_connection, "_connection", None)  # asyncpg's, under SQLAlchemy's adapter
    if connection is not None and connection.is_closed():
        raise exc.DisconnectionError("the server closed the connection")


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


async def statements_commit_alone(session: AsyncSession) -> None:
    """On PostgreSQL, each statement of the session's next transaction commits as it runs
    (autocommit): asyncpg sends no BEGIN and COMMIT, two of a one-statement transaction's three round
    trips, and no connection waits between them on a crowded loop. Only for statements that need no
    common transaction (each idempotent, none undone by another's failure); when one returns, it is
    on disk. Call it first in the transaction; on SQLite it does nothing."""
    if session.get_bind().dialect.name == "postgresql":
        await session.connection(execution_options={"isolation_level": "AUTOCOMMIT"})


def create_sessionmaker(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    """Sessions for the engine (on SQLite they queue for its one connection: `create_engine`)."""
    return async_sessionmaker(engine, expire_on_commit=False)


def alembic_config(url: str) -> Config:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    # '%' is ConfigParser interpolation syntax; URL-encoded passwords contain it.
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return config


def head_revisions(versions_dir: Path = MIGRATIONS_DIR / "versions") -> frozenset[str]:
    """The head revision ids, read from the migration files' ``revision`` and ``down_revision``
    (without importing Alembic, which costs start-up time). Empty when a file cannot be read so."""
    revisions: set[str] = set()
    parents: set[str] = set()
    for path in versions_dir.glob("*.py"):
        values: dict[str, object] = {}
        try:
            for node in ast.parse(path.read_text(encoding="utf-8")).body:
                target: ast.expr
                if isinstance(node, ast.AnnAssign) and node.value is not None:
                    target, value = node.target, node.value
                elif isinstance(node, ast.Assign) and len(node.targets) == 1:
                    target, value = node.targets[0], node.value
                else:
                    continue
                if isinstance(target, ast.Name) and target.id in ("revision", "down_revision"):
                    values[target.id] = ast.literal_eval(value)
        except (OSError, SyntaxError, ValueError):
            return frozenset()
        revision, down = values.get("revision"), values.get("down_revision")
        if not isinstance(revision, str):
            return frozenset()
        revisions.add(revision)
        parents.update([down] if isinstance(down, str) else down if isinstance(down, tuple | list) else [])
    return frozenset(revisions - parents)


def sqlite_revisions(path: Path) -> frozenset[str] | None:
    """The revisions in an SQLite file's alembic_version table; None when there is none to read."""
    if not path.is_file():
        return None
    try:
        # mode=rw: never creates the file; plain sqlite3, no engine, no Alembic.
        with contextlib.closing(sqlite3.connect(f"{path.resolve().as_uri()}?mode=rw", uri=True)) as db:
            return frozenset(row[0] for row in db.execute("SELECT version_num FROM alembic_version"))
    except sqlite3.Error:
        return None


async def migrate_if_due(url: str) -> bool:
    """Upgrade an SQLite file to the newest schema unless it is there already (checked without
    Alembic, whose import and run cost every start); other databases: always upgrade. True if it ran."""
    path = sqlite_file(url)
    if path is not None:
        heads = head_revisions()
        if heads and sqlite_revisions(path) == heads:
            return False
    await migrate(url)
    return True


async def migrate(url: str, revision: str = "head") -> None:
    """Upgrade the database at ``url`` to ``revision``, by default the newest schema."""
    from alembic import command

    # env.py runs its own event loop (asyncio.run), so it must run off this one.
    await asyncio.to_thread(command.upgrade, alembic_config(url), revision)


async def downgrade(url: str, revision: str) -> None:
    from alembic import command

    await asyncio.to_thread(command.downgrade, alembic_config(url), revision)
