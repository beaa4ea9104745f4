"""Telling an infrastructure failure from a bad update, and saying so once per outage.

An update whose handling failed because the database, Redis or the disk failed is not answered with
the apology and marked handled: it stays pending and is tried again (bot.db.inbox_dispatcher). What
counts is decided by the exception's class (and its causes): the database's connection, disk and
lock errors (SQLAlchemy's `OperationalError`/`InterfaceError`/`DisconnectionError` and the pool's
`TimeoutError`; a DBAPIError whose connection was invalidated), Redis's `ConnectionError` and
`TimeoutError`, and the operating system's "no space left", "read-only file system" and I/O errors.
A bad input (a `ValueError`, a constraint violation, a schema error) is not one: it is apologised for.
`Outages` logs the first failure of an outage with its reason and the recovery, never each update.
"""

from __future__ import annotations

import errno
import logging
import time

from aiogram.exceptions import AiogramError
from sqlalchemy import exc as sa

log = logging.getLogger(__name__)

DISK_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EIO})
SQLITE_INFRA_WORDS = ("readonly", "read-only", "disk", "locked", "unable to open", "i/o error", "full")
"""SQLite reports its disk and lock failures as OperationalError, as it does a missing table: these
words in sqlite3's message (sqlite3.c `sqlite3ErrStr`: "attempt to write a readonly database",
"database or disk is full", "disk I/O error", "database is locked", "unable to open database file")
say which."""
POSTGRES_INFRA_SQLSTATES = ("08", "53", "57P", "58", "25006")
"""PostgreSQL error classes of the server, not the statement (Appendix A, "PostgreSQL Error Codes"):
08 connection exception, 53 insufficient resources (53100 disk full), 57P operator intervention
(shutdown, cannot connect now), 58 system error (I/O), 25006 read-only transaction (a standby)."""


def _redis_errors() -> tuple[type[BaseException], ...]:
    try:
        from redis import exceptions
    except ImportError:  # pragma: no cover - redis is a dependency; polling never needs it
        return ()
    return (exceptions.ConnectionError, exceptions.TimeoutError)


def _database_failed(error: BaseException) -> bool:
    if isinstance(error, sa.DisconnectionError | sa.TimeoutError | sa.InterfaceError):
        return True
    if isinstance(error, sa.DBAPIError):
        if error.connection_invalidated:
            return True
        original = error.orig
        sqlstate = str(getattr(original, "sqlstate", None) or getattr(original, "pgcode", None) or "")
        if sqlstate:
            return sqlstate.startswith(POSTGRES_INFRA_SQLSTATES)
        if isinstance(error, sa.OperationalError):
            message = str(original).lower()
            return any(word in message for word in SQLITE_INFRA_WORDS) or "connect" in message
    return False


def is_infrastructure(error: BaseException) -> bool:
    """Whether ``error`` (or what caused it) is the database, Redis or the disk failing. A failure
    to reach Telegram is not one (aiogram's errors end the search: their causes are Telegram's)."""
    redis_errors = _redis_errors()
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, AiogramError):
            return False
        if _database_failed(current) or (redis_errors and isinstance(current, redis_errors)):
            return True
        if isinstance(current, OSError) and (
            current.errno in DISK_ERRNOS or isinstance(current, ConnectionRefusedError | ConnectionResetError)
        ):
            return True  # the disk; or a socket to the database refused or reset while connecting
        current = current.__cause__ or current.__context__
    return False


def reason(error: BaseException) -> str:
    return f"{type(error).__name__}: {str(error).splitlines()[0][:200] if str(error) else ''}"


class Outages:
    """One warning when updates start failing on the infrastructure, one line when they succeed
    again; the updates failing in between are counted, not logged."""

    def __init__(self) -> None:
        self.since: float | None = None
        self.failed = 0
        self.logged = 0  # lines written (for the tests)

    def failed_on(self, error: BaseException) -> None:
        self.failed += 1
        if self.since is None:
            self.since = time.monotonic()
            self.logged += 1
            log.warning("infrastructure failing (%s): updates stay pending and are retried", reason(error))

    def succeeded(self) -> None:
        if self.since is None:
            return
        seconds, failed = time.monotonic() - self.since, self.failed
        self.since, self.failed = None, 0
        self.logged += 1
        log.warning("infrastructure back after %.1f s: %d failed attempt(s) retried", seconds, failed)
