"""An update's unit of work (bot.db.work) on both backends: a new dialog's row, its answers and the
state naming it are written by nobody while the handler runs, then commit with the done mark; a
failed update leaves none of it."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from aiogram import Bot, Dispatcher, Router
from aiogram.fsm.context import FSMContext
from aiogram.fsm.storage.base import StorageKey
from aiogram.types import Chat, Message, Update, User
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.db import dialogs, users
from bot.db.middleware import DbSessionMiddleware
from bot.db.models import DialogSession, FsmRecord, ProcessedUpdate
from bot.db.work import UpdateWork
from bot.storage import SqlAlchemyStorage
from tests.bot import both_backends

db_url = both_backends.db_url
sessionmaker = both_backends.sessionmaker
USER_ID = 888


def message_update(update_id: int, text: str) -> Update:
    user = User(id=USER_ID, is_bot=False, first_name="Ann", language_code="en")
    chat = Chat(id=USER_ID, type="private")
    message = Message(message_id=update_id, date=datetime.now(UTC), chat=chat, from_user=user, text=text)
    return Update(update_id=update_id, message=message)


async def on_disk(sessionmaker: async_sessionmaker[AsyncSession]) -> dict[str, Any]:
    async with sessionmaker() as session:
        dialogs = (await session.execute(select(DialogSession.id, DialogSession.answers))).all()
        records = (await session.execute(select(FsmRecord.data))).scalars().all()
        marks = (await session.execute(select(ProcessedUpdate.update_id))).scalars().all()
    return {"dialogs": [tuple(row) for row in dialogs], "records": list(records), "marks": list(marks)}


@pytest.mark.parametrize("fails", [False, True])
async def test_a_new_dialog_and_the_state_naming_it_commit_with_the_done_mark(
    sessionmaker: async_sessionmaker[AsyncSession], fails: bool
) -> None:
    single_process = sessionmaker.kw["bind"].dialect.name == "sqlite"
    during: list[dict[str, Any]] = []
    router = Router()

    @router.message()
    async def open_dialog(message: Message, state: FSMContext, work: UpdateWork) -> None:
        dialog_id = await dialogs.start_dialog(work, telegram_id=USER_ID, task="inference")
        await dialogs.save_answers(work, dialog_id, {"task": "inference"})
        await state.update_data(dialog_id=dialog_id)
        during.append(await on_disk(sessionmaker))
        if fails:
            raise RuntimeError("handler failed")

    dp = Dispatcher(storage=SqlAlchemyStorage(sessionmaker))
    dp.update.outer_middleware(DbSessionMiddleware(sessionmaker, single_process=single_process))
    dp.include_router(router)
    bot = Bot("42:TEST")
    try:
        if fails:
            with pytest.raises(RuntimeError):
                await dp.feed_update(bot, message_update(1, "hi"))
        else:
            await dp.feed_update(bot, message_update(1, "hi"))
    finally:
        await bot.session.close()
    assert during == [{"dialogs": [], "records": [], "marks": []}]
    after = await on_disk(sessionmaker)
    if fails:
        assert after == {"dialogs": [], "records": [], "marks": []}
    else:
        [(dialog_id, answers)] = after["dialogs"]
        assert answers == {"task": "inference"}
        assert after["records"] == [{"dialog_id": dialog_id}]
        assert after["marks"] == [1]


async def test_commit_writes_the_work_so_far_without_its_done_mark(
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    """`UpdateWork.commit`: what must be on disk before the handler speaks, in one line; the done mark
    still waits for the handler's end (the update is not finished by it)."""
    storage = SqlAlchemyStorage(sessionmaker, remember=True)
    work = UpdateWork(42, 7, sessionmaker)
    bound = storage.bound(work)
    key = StorageKey(bot_id=42, chat_id=USER_ID, user_id=USER_ID)
    await bound.set_data(key, {"step": "model"})
    await work.commit()
    assert (await on_disk(sessionmaker))["records"] == [{"step": "model"}]
    assert (await on_disk(sessionmaker))["marks"] == []
    assert await storage.get_data(key) == {"step": "model"}


@pytest.mark.parametrize("fails", [False, True])
async def test_commit_with_writes_a_handlers_rows_and_the_state_in_one_transaction(
    sessionmaker: async_sessionmaker[AsyncSession], fails: bool
) -> None:
    """`UpdateWork.commit_with`: a row of the handler's own (a lead, a measurement) and the state saved
    before it commit together, or neither does (nor does memory take the state)."""
    storage = SqlAlchemyStorage(sessionmaker, remember=True)
    work = UpdateWork(42, 7, sessionmaker)
    key = StorageKey(bot_id=42, chat_id=USER_ID, user_id=USER_ID)
    await storage.bound(work).set_data(key, {"lead": None})

    async def store(session: AsyncSession) -> int:
        await users.upsert_user(
            session, telegram_id=USER_ID, username=None, first_name="Ann", telegram_language="en", source=None
        )
        dialog_id = await dialogs.start_dialog(session, telegram_id=USER_ID, task="inference")
        if fails:
            raise RuntimeError("the disk refused")
        return dialog_id

    if fails:
        with pytest.raises(RuntimeError):
            await work.commit_with(store)
        assert await on_disk(sessionmaker) == {"dialogs": [], "records": [], "marks": []}
        assert await storage.get_data(key) == {}
    else:
        dialog_id = await work.commit_with(store)
        assert await on_disk(sessionmaker) == {
            "dialogs": [(dialog_id, {})],
            "records": [{"lead": None}],
            "marks": [],
        }
        assert await storage.get_data(key) == {"lead": None}
