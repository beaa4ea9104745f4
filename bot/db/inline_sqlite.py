"""aiosqlite's connection without its thread: each SQLite call runs in place, on the event loop.

aiosqlite hands every call (cursor, execute, fetch, commit) to a thread of its own and back through
the loop: three thread hops per statement, each waiting for the GIL of a busy loop
(``sys.getswitchinterval()``), for work that takes SQLite microseconds (a point query or a one-row
write on a local file, WAL, synchronous=NORMAL: no fsync per commit). In place, the statement runs.

The price: a call that waits inside SQLite blocks the loop. In this process nothing waits: it has one
connection (bot.db.engine), which sessions queue for. Another process writing the same file
would (two bots on one file: not supported; `python -m bot stats` only reads). A WAL checkpoint runs
in place too. The modes and the contract: docs/persistence.md.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Any

import aiosqlite
from sqlalchemy.engine import make_url


class InlineConnection(aiosqlite.Connection):
    """An aiosqlite.Connection whose calls run in the calling thread (its worker thread never starts)."""

    def __init__(self, connector: Callable[[], sqlite3.Connection], iter_chunk_size: int = 64) -> None:
        super().__init__(connector, iter_chunk_size)

    async def _execute(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        if not self._running or not self._connection:
            raise ValueError("Connection closed")
        return fn(*args, **kwargs)

    async def _connect(self) -> InlineConnection:
        if self._connection is None:
            self._connection = self._connector()
        return self

    def __await__(self) -> Any:
        return self._connect().__await__()

    def stop(self) -> None:
        self._running = False
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    async def close(self) -> None:
        self.stop()


def inline_creator(url: str) -> Callable[[], InlineConnection]:
    """``async_creator`` for create_async_engine: connections as aiosqlite would open them for ``url``
    (SQLAlchemy's own connect arguments for it), run in place."""
    from sqlalchemy.dialects.sqlite.aiosqlite import SQLiteDialect_aiosqlite

    args, kwargs = SQLiteDialect_aiosqlite().create_connect_args(make_url(url))
    connect: Callable[..., sqlite3.Connection] = sqlite3.connect

    def connector() -> sqlite3.Connection:
        return connect(*args, **kwargs)

    def creator() -> InlineConnection:
        return InlineConnection(connector)

    return creator
