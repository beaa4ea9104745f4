"""Start-up cost: the command menus are set only when they changed since they were last set; old
de-duplication rows are dropped once polling has started; a polling start on a database at the newest
schema imports neither Alembic nor matplotlib nor Redis."""

from __future__ import annotations

import asyncio
import gc
import os
import shutil
import signal
import sys
import time
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import select

from bot.app import GC_THRESHOLDS, commands_marker
from bot.config import ConfigError
from bot.db.engine import create_engine, create_sessionmaker
from bot.db.middleware import PROCESSED_UPDATES_KEPT
from bot.db.models import ProcessedUpdate, utc_now
from bot.startup import wait_for_telegram
from tests.bot.e2e.conftest import REPLY_TIMEOUT_S, Harness, url_of
from tests.bot.e2e.test_delivery import PROCESS_TIMEOUT_S, ROOT, start_bot
from tgsandbox import Sandbox

ADMIN_ID = 900
NOT_AT_START = ("alembic", "matplotlib", "redis", "aiohttp.web")
"""Packages a polling start must not import: migrations (none due), pictures (drawn in a worker
process, started with the bot), Redis (REDIS_URL unset), the webhook server."""
STARTUP_VARIABLES = {"REDIS_URL", "WEBHOOK_URL", "WEBHOOK_SECRET", "OFFERS_FILE", "BOT_TOKEN", "DATABASE_URL"}


def set_my_commands_calls(h: Harness) -> int:
    return len([r for r in h.sandbox.requests if r.method == "setMyCommands"])


async def started(h: Harness) -> None:
    await h.sandbox.wait_for(lambda: h.sandbox.polls > 0, "the first getUpdates")


async def test_set_my_commands_only_when_the_commands_changed(harness: Harness) -> None:
    h = harness
    await started(h)
    first = set_my_commands_calls(h)
    assert first == 3  # ru, en and the default language's menu
    marker = commands_marker(h.db_url)
    assert marker is not None and marker.is_file()

    polls = h.sandbox.polls
    await h.restart()
    await h.sandbox.wait_for(lambda: h.sandbox.polls > polls, "getUpdates after the restart")
    assert set_my_commands_calls(h) == first  # unchanged: nothing sent
    assert h.sandbox.commands(None, "en")[0]["command"] == "start"  # the menu set before stays

    # Another default language changes the menu of users of other languages: set again.
    h.settings = h.settings.model_copy(update={"default_language": "en"})
    before = marker.read_bytes()
    await h.restart()
    # the marker is rewritten once every menu is set: waiting for the first call raced the other two
    await h.sandbox.wait_for(lambda: marker.read_bytes() != before, "setMyCommands after the change")
    assert set_my_commands_calls(h) == 2 * first

    # An admin's own menu is part of what was set: a new admin gets it at the next start.
    h.settings = h.settings.model_copy(update={"admin_ids": frozenset({ADMIN_ID})})
    h.sandbox.user(id=ADMIN_ID)  # has started the bot: their chat exists
    before = marker.read_bytes()
    await h.restart()
    # The marker is rewritten once every menu is set (the admin's first one is not the last call).
    await h.sandbox.wait_for(lambda: marker.read_bytes() != before, "the menus set in full")
    chat = {"type": "chat", "chat_id": ADMIN_ID}
    assert h.sandbox.commands(chat, "en"), "the admin's command menu"
    after_admin = set_my_commands_calls(h)
    polls = h.sandbox.polls
    await h.restart()
    await h.sandbox.wait_for(lambda: h.sandbox.polls > polls, "getUpdates after the restart")
    assert set_my_commands_calls(h) == after_admin


async def update_ids(h: Harness) -> set[int]:
    engine = create_engine(h.db_url)
    try:
        async with create_sessionmaker(engine)() as session:
            return set(await session.scalars(select(ProcessedUpdate.update_id)))
    finally:
        await engine.dispose()


async def test_old_deduplication_rows_are_dropped_once_polling_started(harness: Harness) -> None:
    h = harness
    await started(h)
    assert h.app is not None
    engine = create_engine(h.db_url)
    try:
        async with create_sessionmaker(engine)() as session, session.begin():
            old = utc_now() - PROCESSED_UPDATES_KEPT - timedelta(hours=1)
            session.add_all([
                ProcessedUpdate(bot_id=h.app.bot.id, update_id=1, created_at=old),  # handled, too old
                ProcessedUpdate(bot_id=h.app.bot.id, update_id=2),  # handled, recent
            ])  # fmt: skip
    finally:
        await engine.dispose()

    await h.restart()  # the prune runs in the background once the dispatcher polls
    deadline = time.monotonic() + REPLY_TIMEOUT_S
    while (left := await update_ids(h)) != {2}:
        assert time.monotonic() < deadline, f"old rows kept: {left}"
        await asyncio.sleep(0.01)


async def test_a_polling_start_imports_no_migration_picture_or_redis_code(
    tmp_path: Path, template_db: Path
) -> None:
    db_path = tmp_path / "bot.sqlite3"
    shutil.copy(template_db, db_path)  # at the newest schema: no migration is due
    async with Sandbox() as sandbox:
        # each import on stderr, of the bot's process only (not an environment variable: the picture
        # worker the bot starts with pictures on, as by default, imports matplotlib in its own)
        bot = await start_bot(sandbox, db_path, cwd=tmp_path, python_options=("-X", "importtime"))
        bot.proc.send_signal(signal.SIGTERM)
        assert await bot.exit_code() == 0, bot.tail()
    imported = {line.rsplit("|", 1)[-1].strip() for line in bot.lines if line.startswith("import time:")}
    assert "bot.app" in imported  # the listing is complete
    unwanted = sorted(m for m in imported if any(m == p or m.startswith(p + ".") for p in NOT_AT_START))
    assert not unwanted


async def test_the_collector_runs_with_the_bots_thresholds_once_started(harness: Harness) -> None:
    """Start-up's objects frozen out of the collector's way, and the young generation sized for
    the thousands of short-lived objects an update makes (bot.app.GC_THRESHOLDS)."""
    await started(harness)
    assert gc.isenabled()
    assert gc.get_threshold() == GC_THRESHOLDS
    assert gc.get_freeze_count() > 0


async def test_telegram_failing_at_start_is_waited_for_then_the_bot_polls(
    tmp_path: Path, template_db: Path
) -> None:
    """Issue 19, item 7: Telegram answering 5xx at start stopped the bot with a traceback; now each
    attempt is one log line and the bot polls once Telegram answers."""
    db_path = tmp_path / "bot.sqlite3"
    shutil.copy(template_db, db_path)
    async with Sandbox() as sandbox:
        outage = sandbox.fail(502, "Bad Gateway", methods=["getMe"], times=2)
        bot = await start_bot(sandbox, db_path, cwd=tmp_path)  # returns once it polls
        assert outage.hits == 2
        bot.proc.send_signal(signal.SIGTERM)
        assert await bot.exit_code() == 0, bot.tail()
    retries = [line for line in bot.lines if "retrying in" in line]
    assert len(retries) == 2, bot.tail()
    assert "does not answer (TelegramServerError: " in retries[0]
    assert "retrying in 1 s (attempt 1)" in retries[0]
    assert "retrying in 2 s (attempt 2)" in retries[1]
    assert bot.logged("answers (attempt 3)")
    assert not bot.logged("Traceback")


async def test_a_token_telegram_refuses_stops_the_start_with_one_line(tmp_path: Path) -> None:
    """A revoked token (getMe answered 401): exit status 2, one line naming BOT_TOKEN, before the
    database is touched."""
    db_path = tmp_path / "bot.sqlite3"
    async with Sandbox() as sandbox:
        sandbox.fail(401, "Unauthorized", methods=["getMe"], times=None)
        env = {key: value for key, value in os.environ.items() if key not in STARTUP_VARIABLES}
        env.update(
            BOT_TOKEN=sandbox.token, TELEGRAM_API_URL=sandbox.base_url, DATABASE_URL=url_of(db_path),
            PYTHONPATH=str(ROOT),
        )  # fmt: skip
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "bot", cwd=tmp_path, env=env,
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        _, stderr = await asyncio.wait_for(proc.communicate(), PROCESS_TIMEOUT_S)
    lines = stderr.decode().strip().splitlines()
    assert proc.returncode == 2, lines
    assert len(lines) == 1 and "BOT_TOKEN: Telegram refuses this token" in lines[0], lines
    assert sandbox.token not in lines[0]
    assert not db_path.exists()


async def test_no_bot_api_at_the_url_is_a_setting_to_fix(caplog: pytest.LogCaptureFixture) -> None:
    """getMe answered 404 (a server, but no Bot API there): TELEGRAM_API_URL named, nothing retried."""
    async with Sandbox() as sandbox:
        sandbox.fail(404, "Not Found", methods=["getMe"], times=None)
        with pytest.raises(ConfigError, match=r"TELEGRAM_API_URL: 127\.0\.0\.1:\d+ refuses getMe \(Telegram"):
            await wait_for_telegram(sandbox.make_bot(), sandbox.base_url, first_retry_s=0.01)
    assert "retrying" not in caplog.text


async def test_flood_control_at_start_is_waited_out(caplog: pytest.LogCaptureFixture) -> None:
    async with Sandbox() as sandbox:
        flood = sandbox.fail(429, methods=["getMe"], times=1, retry_after=1)
        bot = sandbox.make_bot()
        assert await wait_for_telegram(bot, sandbox.base_url, first_retry_s=0.01)
        assert flood.hits == 1 and (await bot.me()).id == sandbox.bot_user.id
    assert "asks to wait 1 s; retrying in 1 s (attempt 1)" in caplog.text
