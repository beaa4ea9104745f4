"""First contact prepared at receipt: a poll batch's new senders get their rows, and their FSM
records are read, in the inbox's receipt (bot.db.inbox), for the whole batch at once.

A new user's first updates used to write rows of their own: the /start wrote the user's row (and
read the FSM record that is not there yet), the task press the dialog's row. Each such statement
takes SQLite's one write turn (bot.db.turn), where it queues behind the group commits and the
receipts, which go first (they finish updates in hand). Under a crowd of new users, who all write,
that queue was the tail: `bench/bot_load.py --users 100` (guided walk, 2 cores) had /start at p50
0.6 s and the task press at p50 1.5 s, p99 2.6 s, while later presses took 0.07 s.

The receipt holds the turn anyway. Here, right after it records the batch, one statement writes the
rows of the senders this process has not seen (bot.db.middleware.DbSessionMiddleware.first_contact)
and one reads the FSM records memory does not keep (bot.storage.SqlAlchemyStorage.prefetch); both
go into memory once committed, which is what their updates then read. With the dialog's new row
deferred to the group commit (bot.db.repository.DialogIds), a new user's updates issue no statement
of their own: their writes wait for the group commit, like a known user's.

Only where one process owns the database (the embedded SQLite), as for everything memory keeps of
it. It is a shortcut: when it fails, it is logged, and each update reads and writes for itself.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from aiogram import Bot
from aiogram.dispatcher.middlewares.user_context import UserContextMiddleware
from aiogram.fsm.middleware import FSMContextMiddleware
from aiogram.fsm.storage.base import StorageKey
from aiogram.types import Update
from aiogram.types import User as TelegramUser
from sqlalchemy.ext.asyncio import AsyncSession

from bot.db.middleware import INLINE_SOURCE, DbSessionMiddleware, deep_link_source
from bot.storage import SqlAlchemyStorage


class FirstContact:
    """The inbox's `Inbox.prepare` (see the module doc)."""

    def __init__(
        self, users: DbSessionMiddleware, storage: SqlAlchemyStorage, fsm: FSMContextMiddleware
    ) -> None:
        self.users = users
        self.storage = storage
        self.fsm = fsm

    async def __call__(
        self, session: AsyncSession, bot: Bot, updates: Sequence[Update]
    ) -> Callable[[], None]:
        senders: list[tuple[TelegramUser, str | None]] = []
        keys: list[StorageKey] = []
        for update in updates:
            context = UserContextMiddleware.resolve_event_context(update)
            if context.user is None or self.users.known_users.seen(context.user.id):
                continue  # no sender, or one known: its update finds (or reads) what it needs
            first_seen = INLINE_SOURCE if update.inline_query is not None else deep_link_source(update)
            senders.append((context.user, first_seen))
            fsm_context = self.fsm.resolve_context(
                bot, context.chat_id, context.user_id, context.thread_id, context.business_connection_id
            )
            if fsm_context is not None:
                keys.append(fsm_context.key)
        if self.users.dialog_ids is not None:  # before any update needs an id
            await self.users.dialog_ids.load(session)
        keeps = [
            await self.users.first_contact(session, senders), await self.storage.prefetch(session, keys)
        ]

        def remember() -> None:
            for keep in keeps:
                if keep is not None:
                    keep()

        return remember
