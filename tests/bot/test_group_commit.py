"""The group commit (bot.db.group_commit) of a step's state with its done mark, on a real SQLite file:
deferred until the handler is done, written for several updates at once, remembered only once on
disk, and lost as a whole (the update pending again) when the group fails."""

from __future__ import annotations

import asyncio
from typing import Any

from aiogram import Bot, Router
from aiogram.fsm.context import FSMContext
from aiogram.types import Message, Update
from sqlalchemy import select, text
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.db import dialogs, users
from bot.db.inbox import update_payload
from bot.db.models import DialogSession, FsmRecord, ProcessedUpdate
from bot.db.work import UpdateWork
from bot.storage import SqlAlchemyStorage
from tests.bot.conftest import wired_dispatcher
from tests.bot.statements import groups_of, recorded
from tests.bot.updates import message_update

BOT_ID = 42
USERS = (501, 502, 503)


class Setup:
    """A dispatcher whose one handler does what a step press does: answers into the dialog row,
    the next step into the FSM record; and what the database holds meanwhile, as the handler saw it."""

    def __init__(self, sessionmaker: async_sessionmaker[AsyncSession]) -> None:
        self.sessionmaker = sessionmaker
        self.dialogs: dict[int, int] = {}
        self.seen_during: list[tuple[str | None, dict[str, Any] | None]] = []
        router = Router()

        @router.message()
        async def step(message: Message, state: FSMContext, work: UpdateWork) -> None:
            assert message.from_user is not None and message.text is not None
            dialog_id = self.dialogs[message.from_user.id]
            await dialogs.save_answers(work, dialog_id, {"task": "inference", "step": message.text})
            if message.text == "done":
                await dialogs.complete_dialog(
                    work, dialog_id, answers={"task": "inference", "step": "last"}, summary={"fits": True},
                    verdict="fits", offer_id=None,
                )  # fmt: skip
            await state.set_state("Wizard:precision")
            await state.update_data(step=message.text)
            # What a Telegram call would find: nothing of this update on disk yet. The read takes
            # SQLite's one connection: it would wait forever if the handler held it.
            self.seen_during.append(await self.on_disk(message.from_user.id))

        # As the bot wires it on SQLite: the FSM in the database, remembered; writes deferred.
        self.dp = wired_dispatcher(sessionmaker, router)
        assert isinstance(self.dp.storage, SqlAlchemyStorage) and self.dp.sessions is not None
        self.storage = self.dp.storage
        self.middleware = self.dp.sessions

    async def add_dialogs(self, bot: Bot) -> None:
        """A dialog per user, and a first update each (it writes the user's row: not grouped)."""
        async with self.sessionmaker() as session, session.begin():
            for user_id in USERS:
                await users.upsert_user(
                    session, telegram_id=user_id, username=None, first_name="Ann", telegram_language="en",
                    source=None,
                )  # fmt: skip
                self.dialogs[user_id] = await dialogs.start_dialog(
                    session, telegram_id=user_id, task="inference"
                )
        await self.feed(bot, [message_update(i, "first", user) for i, user in enumerate(USERS, 1)])
        # Each wrote its user's row, before its handler ran: no handler holds SQLite's connection.
        self.seen_during.clear()

    async def on_disk(self, user_id: int) -> tuple[str | None, dict[str, Any] | None]:
        """(FSM state, the dialog's answers) as committed."""
        async with self.sessionmaker() as session:
            state = await session.scalar(select(FsmRecord.state).where(FsmRecord.key.contains(str(user_id))))
            answers = await session.scalar(
                select(DialogSession.answers).where(DialogSession.id == self.dialogs[user_id])
            )
        return state, answers

    async def feed(self, bot: Bot, updates: list[Update]) -> list[BaseException | None]:
        await self.dp.inbox.receive(BOT_ID, [(u.update_id, update_payload(u)) for u in updates])
        tasks = [t for u in updates if (t := self.dp.handle_in_background(bot, u, fresh=True))]
        return await asyncio.gather(*tasks, return_exceptions=True)

    async def pending(self) -> set[int]:
        async with self.sessionmaker() as session:
            rows = await session.scalars(
                select(ProcessedUpdate.update_id).where(ProcessedUpdate.payload.is_not(None))
            )
            return set(rows)


async def test_a_step_state_commits_with_its_mark_in_one_group_for_several_users(
    sessionmaker: async_sessionmaker[AsyncSession], bot: Bot
) -> None:
    setup = Setup(sessionmaker)
    await setup.add_dialogs(bot)
    with recorded(sessionmaker) as statements:
        await setup.feed(bot, [message_update(10 + i, f"model-{i}", user) for i, user in enumerate(USERS)])

    # While each handler ran, neither its dialog row nor its FSM record was written, and it held
    # no connection (its read of the database went through): the others could write meanwhile …
    assert setup.seen_during == [("Wizard:precision", {"task": "inference", "step": "first"})] * len(USERS)
    # … then all of them, and the marks, in group commits shared by the updates finishing together
    # (the writer takes whatever waits once SQLite's write turn is its own).
    assert await setup.pending() == set()
    assert groups_of(statements) < len(USERS)
    for i, user in enumerate(USERS):
        assert await setup.on_disk(user) == ("Wizard:precision", {"task": "inference", "step": f"model-{i}"})
    assert await setup.pending() == set()


async def test_two_writes_of_one_dialog_row_leave_it_as_in_order(
    sessionmaker: async_sessionmaker[AsyncSession], bot: Bot
) -> None:
    setup = Setup(sessionmaker)
    await setup.add_dialogs(bot)
    await setup.feed(bot, [message_update(20, "done", USERS[0])])
    async with sessionmaker() as session:
        row = await session.get(DialogSession, setup.dialogs[USERS[0]])
    assert row is not None
    assert row.answers == {"task": "inference", "step": "last"}
    assert (row.status, row.verdict) == ("completed", "fits")


async def test_a_failed_group_leaves_the_state_as_before_and_the_update_pending(
    sessionmaker: async_sessionmaker[AsyncSession], bot: Bot
) -> None:
    setup = Setup(sessionmaker)
    await setup.add_dialogs(bot)
    await setup.feed(bot, [message_update(30, "model-a", USERS[0])])
    before = await setup.on_disk(USERS[0])
    async with sessionmaker() as session, session.begin():  # the disk refuses the next mark
        await session.execute(
            text(
                "CREATE TRIGGER refuse BEFORE UPDATE ON processed_updates WHEN NEW.update_id = 31 "
                "BEGIN SELECT RAISE(ABORT, 'disk I/O error'); END"
            )
        )
    results = await setup.feed(bot, [message_update(31, "model-b", USERS[0])])
    assert results == [None]  # the errors are the dispatcher's to log; the update is not lost:
    assert await setup.on_disk(USERS[0]) == before
    assert await setup.pending() == {31}  # handled again after a restart
    # Memory took nothing of it either: the next update of the user starts from the state on disk.
    key = next(k for k in setup.storage.committed._records if str(USERS[0]) in k)  # type: ignore[union-attr]
    assert setup.storage.committed.get(key) == ("Wizard:precision", {"step": "model-a"})  # type: ignore[union-attr]
