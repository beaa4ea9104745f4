"""The statement recorder: the SQL an engine issues within a block, for tests that count database
work (production classes keep no counters of their own)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

MARKS = 'insert into processed_updates ("bot_id", "update_id", "created_at")'
"""How a statement writing done marks begins (bot.db.processed_updates.finish_updates): one per group."""


@contextmanager
def recorded(bind: AsyncEngine | async_sessionmaker[AsyncSession]) -> Iterator[list[str]]:
    """The statements issued through ``bind``'s engine within the block, each lower-cased on one line
    (an executemany is one statement)."""
    engine = bind if isinstance(bind, AsyncEngine) else bind.kw["bind"]
    statements: list[str] = []

    def record(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        statements.append(" ".join(statement.split()).lower())

    event.listen(engine.sync_engine, "before_cursor_execute", record)
    try:
        yield statements
    finally:
        event.remove(engine.sync_engine, "before_cursor_execute", record)


def reads_of(statements: list[str], table: str) -> int:
    return sum(1 for s in statements if s.startswith("select") and f"from {table}" in s)


def writes_of(statements: list[str], table: str) -> int:
    return sum(1 for s in statements if s.startswith((f"insert into {table} ", f"delete from {table} ")))


def groups_of(statements: list[str]) -> int:
    """How many statements wrote done marks (one per group commit, per bot)."""
    return sum(1 for s in statements if s.startswith(MARKS))
