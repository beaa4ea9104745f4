"""Which failures are the infrastructure's (retried) and which are the update's (apologised for)."""

from __future__ import annotations

import errno
import logging
import sqlite3

import pytest
from aiogram.exceptions import TelegramNetworkError
from aiogram.methods import SendMessage
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from sqlalchemy.exc import IntegrityError, OperationalError

from bot.db.outage import Outages, is_infrastructure


def sqlite_error(message: str) -> OperationalError:
    return OperationalError("INSERT …", {}, sqlite3.OperationalError(message))


@pytest.mark.parametrize(
    "error",
    [
        sqlite_error("attempt to write a readonly database"),
        sqlite_error("database or disk is full"),
        sqlite_error("disk I/O error"),
        RedisConnectionError("Error 111 connecting to 127.0.0.1:6390. Connection refused."),
        RedisTimeoutError("Timeout reading from socket"),
        OSError(errno.ENOSPC, "No space left on device"),
        ConnectionRefusedError(errno.ECONNREFUSED, "Connect call failed"),
    ],
)
def test_the_infrastructure_failing(error: BaseException) -> None:
    assert is_infrastructure(error)
    wrapped = RuntimeError("while saving")
    wrapped.__cause__ = error
    assert is_infrastructure(wrapped)  # found among the causes


@pytest.mark.parametrize(
    "error",
    [
        ValueError("bad input"),
        KeyError("step"),
        sqlite_error("no such table: users"),  # a schema error is not an outage
        IntegrityError("INSERT …", {}, sqlite3.IntegrityError("UNIQUE constraint failed")),
        TelegramNetworkError(SendMessage(chat_id=1, text="x"), "Connection refused"),
    ],
)
def test_the_update_failing(error: BaseException) -> None:
    assert not is_infrastructure(error)


def test_telegram_unreachable_is_not_an_outage_even_over_a_refused_socket() -> None:
    error = TelegramNetworkError(SendMessage(chat_id=1, text="x"), "Connection refused")
    error.__cause__ = ConnectionRefusedError(errno.ECONNREFUSED, "Connect call failed")
    assert not is_infrastructure(error)


def test_an_outage_is_logged_when_it_starts_and_when_it_ends(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="bot.db.outage")
    outages = Outages()
    outages.succeeded()  # nothing was failing: nothing said
    for _ in range(50):
        outages.failed_on(RedisConnectionError("Connection refused"))
    outages.succeeded()
    outages.succeeded()
    assert outages.logged == 2
    assert [r.getMessage().split(" (")[0] for r in caplog.records][:1] == ["infrastructure failing"]
    assert "50 failed attempt(s)" in caplog.records[1].getMessage()
