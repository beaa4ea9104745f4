"""First contact prepared at receipt (SQLite only): in the inbox's receipt transaction (bot.db.inbox),
one statement writes the rows of the batch's senders this process has not seen
(bot.db.middleware.DbSessionMiddleware.first_contact) and one reads the FSM records memory does not
keep (bot.storage.SqlAlchemyStorage.prefetch); both go into memory once committed. A new user's
updates then issue no statement of their own: their writes wait for the group commit, like a known
user's, instead of queueing for SQLite's one connection (figures: bench/README.md).

Only where one process owns the database, as for everything memory keeps of it. A shortcut: when it
fails, it is logged, and each update reads and writes for itself. The delivery contract and the
modes: docs/persistence.md.
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
        keeps = [await self.users.first_contact(session, senders), await self.storage.prefetch(session, keys)]

        def remember() -> None:
            for keep in keeps:
                if keep is not None:
                    keep()

        return remember
