"""Logging set-up: one stream handler whose filter redacts the secrets from every record.

The bot token is in every Bot API URL (`https://api.telegram.org/bot<token>/getMe`), and aiohttp's
errors and tracebacks show such URLs; the webhook secret and the passwords inside DATABASE_URL and
REDIS_URL must not reach a log either. `RedactingFilter` rewrites the message, its arguments, the
formatted traceback and the stack of each record before any handler formats it.
"""

from __future__ import annotations

import logging
import re
import sys
import threading
from collections.abc import Iterable
from types import TracebackType
from urllib.parse import urlsplit

from bot.config import Settings

REDACTED = "<redacted>"
# Any Bot API token inside a URL path, known to us or not: `/bot123456:AAE…/`.
TOKEN_IN_URL = re.compile(r"bot\d+:[A-Za-z0-9_-]+")
# A token-shaped string anywhere (digits, colon, a long secret).
TOKEN_LIKE = re.compile(r"\b\d{5,20}:[A-Za-z0-9_-]{30,100}\b")
FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
_MIN_SECRET_LEN = 4  # shorter values would redact ordinary words
# Loggers that speak at INFO on import (alembic >= 1.16 announces each of its plugins): WARNING.
QUIET_LOGGERS = ("alembic.runtime.plugins",)


class RedactingFilter(logging.Filter):
    """Replaces each secret (and anything shaped like a bot token) with `<redacted>` in a record."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        super().__init__()
        self.secrets = sorted({s for s in secrets if s and len(s) >= _MIN_SECRET_LEN}, key=len, reverse=True)

    def redact(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, REDACTED)
        text = TOKEN_IN_URL.sub(f"bot{REDACTED}", text)
        return TOKEN_LIKE.sub(REDACTED, text)

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a bad format string must not hide the record
            message = f"{record.msg!s} {record.args!r}"
        record.msg, record.args = self.redact(message), None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self.redact(record.exc_text)
        if record.stack_info:
            record.stack_info = self.redact(record.stack_info)
        return True


def secrets_of(settings: Settings) -> list[str]:
    """The token, the webhook and metrics secrets and the passwords of the database and Redis URLs."""
    given = (settings.bot_token, settings.webhook_secret, settings.metrics_token)
    secrets = [s.get_secret_value() for s in given if s]
    for url in (settings.database_url, settings.redis_url):
        if url:
            try:
                password = urlsplit(url).password
            except ValueError:
                password = None
            if password:
                secrets.append(password)
    return secrets


def setup_logging(level: str | int, secrets: Iterable[str] = ()) -> RedactingFilter:
    """Root logging to stderr through the redacting filter (installed on every root handler).

    Where logging is already configured (an embedding program, pytest) its handlers are kept, each
    gets the filter, and the level is left alone.
    """
    redactor = RedactingFilter(secrets)
    root = logging.getLogger()
    if not root.handlers:
        stream = logging.StreamHandler()
        stream.setFormatter(logging.Formatter(FORMAT))
        root.addHandler(stream)
        root.setLevel(level)
    for handler in root.handlers:
        for old in [f for f in handler.filters if isinstance(f, RedactingFilter)]:
            handler.removeFilter(old)
        handler.addFilter(redactor)
    for name in QUIET_LOGGERS:
        logging.getLogger(name).setLevel(max(logging.WARNING, logging.getLogger().getEffectiveLevel()))
    logging.captureWarnings(True)
    return redactor


def log_uncaught_exceptions() -> None:
    """Uncaught exceptions (main thread and others) go through logging, so through the filter."""
    log = logging.getLogger("bot")

    def log_uncaught(kind: type[BaseException], value: BaseException, tb: TracebackType | None) -> None:
        if issubclass(kind, KeyboardInterrupt):
            sys.__excepthook__(kind, value, tb)
            return
        log.critical("uncaught %s", kind.__name__, exc_info=(kind, value, tb))

    def log_uncaught_in_thread(args: threading.ExceptHookArgs) -> None:
        if args.exc_value is not None:
            log_uncaught(args.exc_type, args.exc_value, args.exc_traceback)

    sys.excepthook = log_uncaught
    threading.excepthook = log_uncaught_in_thread
