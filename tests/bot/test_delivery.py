"""The inbox (bot.db.inbox, bot.db.inbox_dispatcher) on a real database, without Telegram: receive,
recover, sweep, prune."""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from aiogram import Bot, Router
from aiogram.types import Message
from sqlalchemy import select
from sqlalchemy.exc import OperationalError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.db import processed_updates
from bot.db.engine import create_engine, create_sessionmaker
from bot.db.group_commit import GroupCommit
from bot.db.inbox import update_payload
from bot.db.inbox_dispatcher import InboxDispatcher
from bot.db.models import ProcessedUpdate, utc_now
from bot.db.work import UpdateWork
from tests.bot.conftest import wired_dispatcher
from tests.bot.statements import groups_of, recorded
from tests.bot.updates import message_update

BOT_ID = 42


def dispatcher(
    sessionmaker: async_sessionmaker[AsyncSession], seen: list[str], **kwargs: Any
) -> InboxDispatcher:
    router = Router()

    @router.message()
    async def on_message(message: Message) -> None:
        seen.append(message.text or "")
        if message.text == "boom":
            raise RuntimeError("handler failed")

    return wired_dispatcher(sessionmaker, router, **kwargs)


async def rows(sessionmaker: async_sessionmaker[AsyncSession]) -> dict[int, bool]:
    """update_id -> still pending."""
    async with sessionmaker() as session:
        result = await session.execute(select(ProcessedUpdate.update_id, ProcessedUpdate.payload))
        return {update_id: payload is not None for update_id, payload in result}


async def test_a_received_update_is_pending_until_handled_and_a_repeat_is_refused(
    sessionmaker: async_sessionmaker[AsyncSession], bot: Bot
) -> None:
    seen: list[str] = []
    dp = dispatcher(sessionmaker, seen)
    update = message_update(1, "hello")
    assert await dp.inbox.receive(BOT_ID, [(1, update_payload(update))]) == {1}
    assert await dp.inbox.receive(BOT_ID, [(1, update_payload(update))]) == set()  # a redelivery
    assert await rows(sessionmaker) == {1: True}
    # A crash here: the next start takes it over and handles it, once.
    assert await dp.recover(bot, all_of_them=True) == 1
    await asyncio.gather(*dp.handling.values())
    assert seen == ["hello"] and await rows(sessionmaker) == {1: False}
    assert await dp.recover(bot, all_of_them=True) == 0


async def test_a_failing_update_is_marked_handled_not_retried_forever(
    sessionmaker: async_sessionmaker[AsyncSession], bot: Bot
) -> None:
    seen: list[str] = []
    dp = dispatcher(sessionmaker, seen)
    update = message_update(2, "boom")
    await dp.inbox.receive(BOT_ID, [(2, update_payload(update))])
    task = dp.handle_in_background(bot, update)
    assert task is not None
    await task
    assert seen == ["boom"] and await rows(sessionmaker) == {2: False}


async def test_a_failing_handler_is_logged_once_with_its_update(
    sessionmaker: async_sessionmaker[AsyncSession], bot: Bot, caplog: pytest.LogCaptureFixture
) -> None:
    dp = dispatcher(sessionmaker, [])
    update = message_update(6, "boom")
    await dp.inbox.receive(BOT_ID, [(6, update_payload(update))])
    with caplog.at_level(logging.ERROR):
        task = dp.handle_in_background(bot, update, fresh=True)
        assert task is not None
        await task
    tracebacks = [r for r in caplog.records if r.exc_info]
    assert len(tracebacks) == 1 and "Update 6 failed" in tracebacks[0].getMessage()
    assert await rows(sessionmaker) == {6: False}


async def test_only_expired_leases_are_taken_over_by_another_replica(
    sessionmaker: async_sessionmaker[AsyncSession], bot: Bot
) -> None:
    seen: list[str] = []
    dp = dispatcher(sessionmaker, seen)
    fresh, stale = message_update(3, "fresh"), message_update(4, "stale")
    async with sessionmaker() as session, session.begin():
        await processed_updates.receive_updates(
            session,
            bot_id=BOT_ID,
            updates=[(3, update_payload(fresh))],
            lease_until=utc_now() + timedelta(minutes=5),
        )
        await processed_updates.receive_updates(
            session,
            bot_id=BOT_ID,
            updates=[(4, update_payload(stale))],
            lease_until=utc_now() - timedelta(seconds=1),
        )
    assert await dp.recover(bot, all_of_them=False) == 1
    await asyncio.gather(*dp.handling.values())
    assert seen == ["stale"] and await rows(sessionmaker) == {3: True, 4: False}


async def test_the_sweep_prunes_old_rows_and_takes_over_expired_ones_while_running(
    sessionmaker: async_sessionmaker[AsyncSession], bot: Bot
) -> None:
    seen: list[str] = []
    dp = dispatcher(sessionmaker, seen, sweep_interval_s=0.02, prune_interval_s=0.02)
    await dp.start_inbox(bot, all_of_them=False)
    async with sessionmaker() as session, session.begin():
        session.add(
            ProcessedUpdate(bot_id=BOT_ID, update_id=5, created_at=datetime.now(UTC) - timedelta(days=3))
        )
        await processed_updates.receive_updates(
            session, bot_id=BOT_ID, updates=[(6, update_payload(message_update(6, "late")))],
            lease_until=utc_now() - timedelta(seconds=1),
        )  # fmt: skip
    try:
        for _ in range(500):
            if await rows(sessionmaker) == {6: False}:
                break
            await asyncio.sleep(0.01)
        assert await rows(sessionmaker) == {6: False}
        assert seen == ["late"]
    finally:
        await dp.drain()


async def test_marks_that_come_together_are_committed_in_one_group(
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    marks = GroupCommit(sessionmaker)
    await dispatcher(sessionmaker, []).inbox.receive(
        BOT_ID, [(i, update_payload(message_update(i, "hi"))) for i in range(10, 20)]
    )
    with recorded(sessionmaker) as statements:
        await asyncio.gather(*(marks.finish(UpdateWork(BOT_ID, i, sessionmaker)) for i in range(10, 20)))
    assert groups_of(statements) == 1
    assert await rows(sessionmaker) == dict.fromkeys(range(10, 20), False)
    with recorded(sessionmaker) as statements:
        await marks.finish(UpdateWork(BOT_ID, 10, sessionmaker))  # marked again (a replay): harmless
    assert groups_of(statements) == 1


async def test_a_failed_group_commit_fails_every_update_in_it(sqlite_url: str) -> None:
    engine = create_engine(sqlite_url)  # no schema: the commit cannot find its table
    try:
        sessions = create_sessionmaker(engine)
        marks = GroupCommit(sessions)
        works = [UpdateWork(BOT_ID, i, sessions) for i in range(3)]
        results = await asyncio.gather(*(marks.finish(work) for work in works), return_exceptions=True)
        assert all(isinstance(r, OperationalError) for r in results), results
    finally:
        await engine.dispose()


async def test_an_update_that_ends_on_a_telegram_call_is_marked_in_a_group(
    sessionmaker: async_sessionmaker[AsyncSession], bot: Bot
) -> None:
    """Its handler wrote nothing of its own: only the mark is left, and the update is finished once
    the group has written it."""
    router = Router()

    @router.message()
    async def on_message(message: Message) -> None:
        pass

    dp = wired_dispatcher(sessionmaker, router)
    assert dp.sessions is not None
    updates = [message_update(i, "hi") for i in range(30, 33)]
    await dp.inbox.receive(BOT_ID, [(u.update_id, update_payload(u)) for u in updates])
    with recorded(sessionmaker) as statements:
        await asyncio.gather(*(t for u in updates if (t := dp.handle_in_background(bot, u, fresh=True))))
    assert 1 <= groups_of(statements) <= len(updates)
    assert await rows(sessionmaker) == {30: False, 31: False, 32: False}
