"""Alembic environment, async: used by ``alembic`` on the command line and by bot.db.engine.migrate."""

import asyncio
from logging.config import fileConfig
from typing import Literal

from alembic import context
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import create_async_engine

from bot.db.engine import sqlite_file
from bot.db.models import Base, UtcDateTime

config = context.config
# Only the `alembic` command line has an ini file; bot.db.engine.migrate leaves logging to the bot.
if config.config_file_name is not None:
    fileConfig(config.config_file_name, disable_existing_loggers=False)

target_metadata = Base.metadata


def database_url() -> str:
    """`alembic -x url=...`, else the config's sqlalchemy.url, else DATABASE_URL (via Settings)."""
    url = context.get_x_argument(as_dictionary=True).get("url") or config.get_main_option("sqlalchemy.url")
    if url:
        return url
    from bot.config import Settings

    return Settings().database_url


def render_item(type_: str, obj: object, autogen_context: object) -> str | Literal[False]:
    # Migrations are frozen history: spell model-side types as plain SQLAlchemy ones.
    if type_ == "type" and isinstance(obj, UtcDateTime):
        return "sa.DateTime(timezone=True)"
    return False


def configure(**kwargs: object) -> None:
    context.configure(
        target_metadata=target_metadata,
        # SQLite cannot ALTER most things; batch mode rebuilds the table instead.
        render_as_batch=True,
        compare_type=True,
        render_item=render_item,
        **kwargs,  # type: ignore[arg-type]
    )


def run_migrations_offline() -> None:
    configure(url=database_url(), literal_binds=True, dialect_opts={"paramstyle": "named"})
    with context.begin_transaction():
        context.run_migrations()


def do_run_migrations(connection: Connection) -> None:
    configure(connection=connection)
    with context.begin_transaction():
        context.run_migrations()


async def run_async_migrations() -> None:
    url = database_url()
    path = sqlite_file(url)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
    # Not bot.db.engine.create_engine: its foreign_keys=ON would make a batch migration's
    # "copy the table, drop the old one" cascade-delete the rows that reference it.
    engine = create_async_engine(url)
    try:
        async with engine.connect() as connection:
            await connection.run_sync(do_run_migrations)
            await connection.commit()
    finally:
        await engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    asyncio.run(run_async_migrations())
