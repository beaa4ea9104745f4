"""Start-up cost: the command menus are set only when they changed since they were last set; old
de-duplication rows are dropped once polling has started; a polling start on a database at the newest
schema imports neither Alembic nor matplotlib nor Redis."""

from __future__ import annotations

import asyncio
import gc
import shutil
import signal
import time
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import select

from bot.app import GC_THRESHOLDS, commands_marker
from bot.db.engine import create_engine, create_sessionmaker
from bot.db.middleware import PROCESSED_UPDATES_KEPT
from bot.db.models import ProcessedUpdate, utc_now
from tests.bot.e2e.conftest import REPLY_TIMEOUT_S, Harness
from tests.bot.e2e.test_delivery import start_bot
from tgsandbox import Sandbox

ADMIN_ID = 900
NOT_AT_START = ("alembic", "matplotlib", "redis", "aiohttp.web")
"""Packages a polling start must not import: migrations (none due), pictures (drawn later, in a
worker), Redis (REDIS_URL unset), the webhook server."""


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
    await h.restart()
    await h.sandbox.wait_for(lambda: set_my_commands_calls(h) > first, "setMyCommands after the change")
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
    tmp_path: Path, template_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db_path = tmp_path / "bot.sqlite3"
    shutil.copy(template_db, db_path)  # at the newest schema: no migration is due
    monkeypatch.setenv("PYTHONPROFILEIMPORTTIME", "1")  # `python -X importtime`: each import on stderr
    async with Sandbox() as sandbox:
        bot = await start_bot(sandbox, db_path, cwd=tmp_path)
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
