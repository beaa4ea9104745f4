"""The hot path's INSERT … ON CONFLICT statements as SQL text that SQLAlchemy compiles once.

SQLAlchemy 2.0 never caches the compiled form of a dialect INSERT (``sqlite.insert`` and
``postgresql.insert`` set ``inherit_cache = False``: sqlalchemy/sqlalchemy#10445), so every
``insert(...).on_conflict_do_update(...)`` is compiled again on every execution, three per update
(the inbox's receipt, the done mark, the FSM record; cost: bench/README.md). A `TextClause` with
typed bind parameters is cached by its text. The text is the same for SQLite (3.24+; RETURNING
3.35+) and PostgreSQL (``ON CONFLICT (columns) DO UPDATE SET c = excluded.c``, ``ON CONFLICT DO
NOTHING``); values go through the columns' own types, so rows are stored as the ORM stores them.
Off the hot path, `dialect_insert` gives the dialect's own INSERT with ON CONFLICT support.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any, cast

from sqlalchemy import Table, TextClause, bindparam, text
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncSession

from bot.db.models import Base, FsmRecord, ProcessedUpdate, User

FSM = cast(Table, FsmRecord.__table__)
USERS = cast(Table, User.__table__)
UPDATES = cast(Table, ProcessedUpdate.__table__)


def _quoted(name: str) -> str:
    return f'"{name}"'


def upsert(
    table: Table, columns: Sequence[str], conflict: Sequence[str], *, set_: dict[str, str] | None = None,
    rows: int = 1, returning: str | Sequence[str] | None = None,
) -> TextClause:  # fmt: skip
    """``INSERT INTO table (columns) VALUES … ON CONFLICT (conflict) DO UPDATE SET …`` (or ``DO
    NOTHING`` when ``set_`` is empty), for ``rows`` rows: parameters ``{column}_{i}``; ``set_`` maps a
    column to an SQL expression (``excluded.c``, ``NULL``); ``returning``: the column(s) given back,
    typed as the table's."""
    returned = (returning,) if isinstance(returning, str) else tuple(returning or ())
    return _upsert(
        table, tuple(columns), tuple(conflict), tuple(sorted((set_ or {}).items())), rows, returned
    )


@cache
def _upsert(
    table: Table, columns: tuple[str, ...], conflict: tuple[str, ...], set_: tuple[tuple[str, str], ...],
    rows: int, returning: tuple[str, ...],
) -> TextClause:  # fmt: skip
    names = ", ".join(map(_quoted, columns))
    values = ", ".join("(" + ", ".join(f":{c}_{i}" for c in columns) + ")" for i in range(rows))
    action = (
        "DO UPDATE SET " + ", ".join(f"{_quoted(c)} = {expression}" for c, expression in set_)
        if set_
        else "DO NOTHING"
    )
    sql = (
        f"INSERT INTO {table.name} ({names}) VALUES {values} "
        f"ON CONFLICT ({', '.join(map(_quoted, conflict))}) {action}"
    )
    if returning:
        sql += " RETURNING " + ", ".join(map(_quoted, returning))
    statement = text(sql).bindparams(
        *(bindparam(f"{c}_{i}", type_=table.c[c].type) for i in range(rows) for c in columns)
    )
    if returning:
        return statement.columns(*(table.c[c] for c in returning))  # type: ignore[return-value]
    return statement


def params(columns: Sequence[str], rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The bind parameters of `upsert` for these rows."""
    return {f"{c}_{i}": row[c] for i, row in enumerate(rows) for c in columns}


def dialect_insert(session: AsyncSession, model: type[Base]) -> Any:
    """INSERT with ON CONFLICT support, in the dialect of the session's database."""
    dialect = session.get_bind().dialect.name
    if dialect == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as postgresql_insert  # ~0.2 s: only when used

        return postgresql_insert(model)
    if dialect == "sqlite":
        return sqlite_insert(model)
    raise NotImplementedError(f"only SQLite and PostgreSQL are supported, not {dialect}")
