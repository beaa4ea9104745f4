"""First contact without writes of its own, on a real SQLite file: new dialog rows deferred under ids
the process hands out (bot.db.dialogs.DialogIds), abandons deferred with them, and the new
senders' rows and FSM records prepared at receipt (bot.db.arrivals), which stays a shortcut when it
fails."""

from __future__ import annotations

import asyncio
import logging

import pytest
from aiogram import Bot
from aiogram.fsm.middleware import FSMContextMiddleware
from aiogram.fsm.storage.base import DefaultKeyBuilder, StorageKey
from aiogram.fsm.storage.memory import SimpleEventIsolation
from aiogram.types import Update
from sqlalchemy import select, text
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.db import dialogs, processed_updates, users
from bot.db.arrivals import FirstContact
from bot.db.group_commit import write_works
from bot.db.inbox import Inbox, update_payload
from bot.db.middleware import DbSessionMiddleware
from bot.db.models import DialogSession
from bot.db.models import User as UserRow
from bot.db.work import UpdateWork
from bot.storage import SqlAlchemyStorage
from tests.bot.conftest import BOT_ID
from tests.bot.statements import reads_of, recorded
from tests.bot.updates import message_update

ANN, BOB = 601, 602


def start_update(update_id: int, user_id: int, text: str = "/start") -> Update:
    return message_update(update_id, text, user_id, username=f"u{user_id}")


async def add_user(session: AsyncSession, telegram_id: int) -> int:
    user = await users.upsert_user(
        session, telegram_id=telegram_id, username=None, first_name=None, telegram_language=None, source=None
    )
    return user.id


async def statuses(sessionmaker: async_sessionmaker[AsyncSession]) -> list[tuple[int, str, str]]:
    async with sessionmaker() as session:
        rows = await session.execute(
            select(DialogSession.id, DialogSession.task, DialogSession.status).order_by(DialogSession.id)
        )
        return [tuple(row) for row in rows]  # type: ignore[misc]


async def test_new_dialogs_wait_for_the_commit_under_ids_that_follow_those_on_disk(
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    async with sessionmaker() as session, session.begin():
        ann = await add_user(session, ANN)
        on_disk = await dialogs.start_dialog(session, telegram_id=ANN, task="train", user_id=ann)
    ids = dialogs.DialogIds()
    work = UpdateWork(BOT_ID, 1, sessionmaker, dialog_ids=ids)
    first = await dialogs.start_dialog(work, telegram_id=ANN, task="inference", user_id=ann)
    await dialogs.save_answers(work, first, {"task": "inference", "model": "llama-3.1-8b"})
    assert await statuses(sessionmaker) == [(on_disk, "train", "started")]  # nothing written yet
    async with sessionmaker() as session, session.begin():
        await write_works(session, [work])
    assert first == on_disk + 1
    assert await statuses(sessionmaker) == [(on_disk, "train", "abandoned"), (first, "inference", "started")]
    async with sessionmaker() as session:
        answers = await session.scalar(select(DialogSession.answers).where(DialogSession.id == first))
    assert answers == {"task": "inference", "model": "llama-3.1-8b"}


async def test_an_abandon_after_a_new_dialog_of_one_update_abandons_it_too(
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    async with sessionmaker() as session, session.begin():
        ann, bob = await add_user(session, ANN), await add_user(session, BOB)
    work = UpdateWork(BOT_ID, 1, sessionmaker, dialog_ids=dialogs.DialogIds())
    anns = await dialogs.start_dialog(work, telegram_id=ANN, task="inference", user_id=ann)
    bobs = await dialogs.start_dialog(work, telegram_id=BOB, task="image", user_id=bob)
    assert await dialogs.abandon_dialogs(work, ANN, user_id=ann) is None  # in the work: not counted
    async with sessionmaker() as session, session.begin():
        await write_works(session, [work])
    assert await statuses(sessionmaker) == [(anns, "inference", "abandoned"), (bobs, "image", "started")]


async def test_ids_are_handed_out_once_when_two_updates_read_the_largest_together(
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    ids = dialogs.DialogIds()

    async def one(asking: asyncio.Event) -> int:
        async with sessionmaker() as session:
            asking.set()
            taken = await ids.next(session)
            await session.commit()
            return taken

    async with sessionmaker() as holder:  # SQLite's one connection held: the five read after it, together
        await holder.execute(text("SELECT 1"))
        asking = [asyncio.Event() for _ in range(5)]
        reading = [asyncio.create_task(one(event)) for event in asking]
        for event in asking:  # set in the step that asks for the connection: all five wait for it
            await event.wait()
    taken = await asyncio.gather(*reading)
    assert sorted(taken) == [1, 2, 3, 4, 5]


class Receiving:
    """An inbox whose receipt prepares first contact, and what it hands on."""

    def __init__(self, sessionmaker: async_sessionmaker[AsyncSession]) -> None:
        self.storage = SqlAlchemyStorage(sessionmaker, DefaultKeyBuilder(with_destiny=True), remember=True)
        self.users = DbSessionMiddleware(sessionmaker, single_process=True)
        fsm = FSMContextMiddleware(storage=self.storage, events_isolation=SimpleEventIsolation())
        self.inbox = Inbox(sessionmaker, prepare=FirstContact(self.users, self.storage, fsm))

    async def receive(self, bot: Bot, updates: list[Update]) -> set[int]:
        return await self.inbox.receive(
            BOT_ID, [(u.update_id, update_payload(u)) for u in updates], arrivals=(bot, updates)
        )


async def test_the_receipt_writes_the_new_senders_rows_and_reads_their_records_once(
    sessionmaker: async_sessionmaker[AsyncSession], bot: Bot
) -> None:
    receiving = Receiving(sessionmaker)
    batch = [start_update(1, ANN, "/start promo"), start_update(2, BOB), start_update(3, ANN, "/start x")]
    with recorded(sessionmaker) as statements:
        fresh = await receiving.receive(bot, batch)
    assert fresh == {1, 2, 3}
    async with sessionmaker() as session:
        rows = {u.telegram_id: u for u in await session.scalars(select(UserRow))}
    assert {telegram_id: row.source for telegram_id, row in rows.items()} == {ANN: "promo", BOB: None}
    kept = receiving.users.known_users.row(ANN)
    assert kept is not None and kept.id == rows[ANN].id and kept.username == f"u{ANN}"
    assert reads_of(statements, "fsm_records") == 1  # one statement for the batch
    key = StorageKey(bot_id=BOT_ID, chat_id=ANN, user_id=ANN)
    with recorded(sessionmaker) as statements:
        assert await receiving.storage.get_state(key) is None  # from memory: no read of its own
        again = await receiving.receive(bot, [start_update(4, ANN), start_update(5, BOB)])
    assert again == {4, 5}
    # known now: nothing read or written at receipt but the updates' own rows
    assert reads_of(statements, "fsm_records") == 0
    assert [s.split(" (")[0] for s in statements] == ["insert into processed_updates"], statements


async def test_a_failing_preparation_leaves_the_receipt_and_the_updates_as_without_it(
    sessionmaker: async_sessionmaker[AsyncSession], bot: Bot, caplog: pytest.LogCaptureFixture
) -> None:
    receiving = Receiving(sessionmaker)

    async def broken(*args: object) -> None:
        raise RuntimeError("disk says no")

    receiving.users.first_contact = broken  # type: ignore[method-assign,assignment]
    with caplog.at_level(logging.ERROR, logger="bot.db.inbox"):
        fresh = await receiving.receive(bot, [start_update(1, ANN)])
    assert fresh == {1}  # recorded all the same: the update is handled, and writes its own row
    assert "could not prepare 1 received update(s)" in caplog.text
    assert receiving.users.known_users.row(ANN) is None
    async with sessionmaker() as session:
        assert await session.scalar(select(UserRow.id)) is None
        assert await processed_updates.pending_update_ids(session, bot_id=BOT_ID) == [1]
