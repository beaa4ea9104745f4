"""What a command needs before it runs: the token, webhook mode, the offers and purchase files
(`check_command`, no network), and what needs the network right after (`check_services`: Redis and a
server database answer within a few seconds, SQLite opens, the webhook server can listen).
Each failure is a one-line ``ConfigError`` naming the variable at fault.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import socket
import sqlite3
import tempfile
from errno import EADDRNOTAVAIL
from pathlib import Path
from urllib.parse import urlsplit

from bot.config.settings import Settings, problem

# @BotFather's format: the bot's numeric id, a colon, the secret part.
TOKEN_FORMAT = re.compile(r"^\d{1,20}:[A-Za-z0-9_-]{20,100}$")
SERVICE_TIMEOUT_S = 3.0
# Commands that talk to Telegram with the real token, and those that run the bot at all.
TELEGRAM_COMMANDS = ("run", "webhook")
BOT_COMMANDS = ("run", "webhook", "sandbox")


def check_command(settings: Settings, command: str) -> None:
    """What `command` needs beyond well-formed values; no network. Raises ConfigError.

    A missing BOT_TOKEN raises SystemExit with the hint to chat locally (`python -m bot sandbox`).
    """
    if command in TELEGRAM_COMMANDS:
        if settings.bot_token is None:
            raise SystemExit("BOT_TOKEN is not set (try `python -m bot sandbox` to chat without one)")
        if not TOKEN_FORMAT.match(settings.bot_token.get_secret_value()):
            raise problem("BOT_TOKEN", "not a token from @BotFather (expected digits:secret, 123456:AAE…)")
    if command == "webhook":
        if not settings.webhook_url:
            raise problem("WEBHOOK_URL", "not set; webhook mode needs the public https:// URL")
        if settings.webhook_secret is None and not settings.webhook_insecure:
            raise problem(
                "WEBHOOK_SECRET",
                "not set; without it anyone can post updates (set WEBHOOK_INSECURE=1 to run so anyway)",
            )
    if command in BOT_COMMANDS and settings.offers_file is not None:
        check_offers_file(settings.offers_file)
    if command in BOT_COMMANDS and settings.purchase_file is not None:
        check_purchase_file(settings.purchase_file, settings.offers_file)


def check_offers_file(path: Path) -> None:
    """The offers file loads: UTF-8 TOML, every row within the bounds
    `core.catalogue.offers.RentalOffer` states (a price positive and below a ceiling, a URL naming a
    host, a known GPU, no id twice). Raises ConfigError naming OFFERS_FILE, the row and the field."""
    from core.catalogue.catalog import load_catalog
    from core.errors import CatalogError

    try:
        load_catalog(offers_file=path)
    except CatalogError as e:
        raise problem("OFFERS_FILE", e.message) from None
    except OSError as e:
        raise problem("OFFERS_FILE", f"{path}: cannot be read: {e.strerror or e}") from None


def check_purchase_file(path: Path, offers_file: Path | None = None) -> None:
    """The purchase file loads (`core.inverse.purchase.load_purchases`): else ConfigError naming
    PURCHASE_FILE, the row and the field."""
    from core.catalogue.catalog import load_catalog
    from core.errors import CatalogError
    from core.inverse.purchase import load_purchases

    try:
        load_purchases(path, load_catalog(offers_file=offers_file))
    except CatalogError as e:
        raise problem("PURCHASE_FILE", e.message) from None
    except OSError as e:
        raise problem("PURCHASE_FILE", f"{path}: cannot be read: {e.strerror or e}") from None


async def check_services(settings: Settings, command: str, timeout: float = SERVICE_TIMEOUT_S) -> None:
    """Redis (for the bot commands) and a server database answer within `timeout`, an SQLite database
    can be opened or created, the webhook server can listen where told; else ConfigError. (Telegram
    not answering yet is waited for: `bot.startup`.)"""
    if settings.redis_url and command in BOT_COMMANDS:
        await _ping_redis(settings.redis_url, timeout)
    if command in (*TELEGRAM_COMMANDS, "migrate", "stats"):
        await _connect_database(settings.database_url, timeout)
    if command in (*BOT_COMMANDS, "migrate"):
        _check_sqlite_file(settings.database_url)
    if command == "webhook":
        await _check_listen(settings.web_server_host, settings.web_server_port)


def _where(url: str) -> str:
    """host:port of a URL, without credentials (for messages)."""
    parts = urlsplit(url)
    if parts.hostname is None:
        return parts.path or url.split("://", 1)[0]
    return f"{parts.hostname}:{parts.port}" if parts.port else parts.hostname


async def _ping_redis(url: str, timeout: float) -> None:
    from redis.asyncio import Redis
    from redis.exceptions import RedisError

    client = Redis.from_url(url, socket_connect_timeout=timeout, socket_timeout=timeout)
    try:
        await asyncio.wait_for(client.ping(), timeout * 2)
    except (RedisError, OSError, TimeoutError) as e:
        detail = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise problem("REDIS_URL", f"Redis at {_where(url)} does not answer ({detail})") from None
    finally:
        await client.aclose()


async def _connect_database(url: str, timeout: float) -> None:
    """A server database (PostgreSQL) accepts a connection; SQLite files are the runners' business."""
    from sqlalchemy.engine import make_url

    if make_url(url).get_backend_name() == "sqlite":
        return
    from sqlalchemy.exc import SQLAlchemyError
    from sqlalchemy.ext.asyncio import create_async_engine

    engine = create_async_engine(url, connect_args={"timeout": timeout})
    try:
        async with asyncio.timeout(timeout * 2), engine.connect():
            pass
    except (SQLAlchemyError, OSError, TimeoutError) as e:
        cause = getattr(e, "orig", None) or e
        detail = str(cause).splitlines()[0] if str(cause) else type(cause).__name__
        raise problem("DATABASE_URL", f"database at {_where(url)} does not answer ({detail})") from None
    except Exception as e:  # asyncpg's own: no such database, role or password; a bad URL parameter
        detail = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise problem("DATABASE_URL", f"database at {_where(url)} refuses to connect ({detail})") from None
    finally:
        await engine.dispose()


def _check_sqlite_file(url: str) -> None:
    """An SQLite database file opens as one, or can be created (its directory is writable)."""
    from bot.db.engine import sqlite_file

    path = sqlite_file(url)
    if path is None:
        return
    if path.exists():
        try:
            with contextlib.closing(sqlite3.connect(f"{path.resolve().as_uri()}?mode=rw", uri=True)) as db:
                db.execute("PRAGMA schema_version").fetchone()
        except sqlite3.Error as e:
            raise problem("DATABASE_URL", f"{path}: cannot be opened as an SQLite database ({e})") from None
        return
    directory = next(p for p in path.absolute().parents if p.exists())  # the first one there
    try:  # a file made and removed at once: the permissions (root passes os.access) and the file system
        tempfile.TemporaryFile(dir=directory).close()
    except OSError as e:
        raise problem("DATABASE_URL", f"cannot create {path}: {directory}: {e.strerror or e}") from None


async def _check_listen(host: str, port: int) -> None:
    """The webhook server can listen at host:port (the address exists here and the port is free)."""
    loop = asyncio.get_running_loop()
    try:
        server = await loop.create_server(asyncio.Protocol, host, port, reuse_address=True)
    except OSError as e:
        # No such address here (or no such name): the host; in use or not allowed: the port.
        host_at_fault = isinstance(e, socket.gaierror) or e.errno == EADDRNOTAVAIL
        at_fault = "WEB_SERVER_HOST" if host_at_fault else "WEB_SERVER_PORT"
        raise problem(at_fault, f"cannot listen on {host}:{port} ({e.strerror or e})") from None
    server.close()
    await server.wait_closed()
