"""One database session (and transaction) per Telegram update, with de-duplication and the user row."""

import logging
import re
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any

from aiogram import BaseMiddleware
from aiogram.types import TelegramObject, Update
from aiogram.types import User as TelegramUser
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.db import repository
from bot.db.models import User, utc_now
from bot.storage import current_update_session

logger = logging.getLogger(__name__)

# Telegram's own limit for t.me/<bot>?start=<payload> links.
DEEP_LINK_PAYLOAD = re.compile(r"[A-Za-z0-9_-]{1,64}")

INLINE_SOURCE = "inline"
"""The source of a user first seen through inline mode (`@bot question` in another chat); also the
deep-link payload of the inline answers' "full answer in the bot" links."""
# Telegram gives up redelivering an update after a day; de-duplication records older than this go.
PROCESSED_UPDATES_KEPT = timedelta(days=2)

Handler = Callable[[TelegramObject, dict[str, Any]], Awaitable[Any]]


def deep_link_source(update: Update) -> str | None:
    """The payload of a ``/start <payload>`` message, if it is a valid deep-link payload."""
    text = update.message.text if update.message else None
    if not text:
        return None
    command, _, payload = text.partition(" ")
    if command != "/start" and not command.startswith("/start@"):
        return None
    payload = payload.strip()
    return payload if DEEP_LINK_PAYLOAD.fullmatch(payload) else None


class DbSessionMiddleware(BaseMiddleware):
    """Outer middleware for ``dp.update``.

    Puts ``db`` (the session; committed when the handler returns, rolled back if it raises),
    ``db_user`` (our User row, or None for updates without a user) and ``deep_link_source`` into the
    handler data. An update that was already processed (Telegram redelivers after timeouts and
    restarts) is dropped before any handler runs. FSM writes of SqlAlchemyStorage made while the
    handler runs join this transaction (see bot.storage.current_update_session).
    """

    def __init__(self, sessionmaker: async_sessionmaker[AsyncSession]) -> None:
        self.sessionmaker = sessionmaker

    async def __call__(self, handler: Handler, event: TelegramObject, data: dict[str, Any]) -> Any:
        if not isinstance(event, Update):
            raise TypeError("DbSessionMiddleware belongs on dp.update.outer_middleware")
        async with self.sessionmaker() as session, session.begin():
            # Claimed inside the transaction: if the handler fails, the claim rolls back with the rest
            # and a redelivery of the update is handled again.
            if not await repository.claim_update(session, bot_id=data["bot"].id, update_id=event.update_id):
                logger.info("Dropping update %s: already processed", event.update_id)
                return None
            source = deep_link_source(event)
            data["db"] = session
            data["deep_link_source"] = source
            first_seen = INLINE_SOURCE if event.inline_query is not None else source
            data["db_user"] = await self._upsert_user(session, data.get("event_from_user"), first_seen)
            token = current_update_session.set(session)
            try:
                return await handler(event, data)
            finally:
                current_update_session.reset(token)

    @staticmethod
    async def _upsert_user(
        session: AsyncSession, telegram_user: TelegramUser | None, source: str | None
    ) -> User | None:
        if telegram_user is None or telegram_user.is_bot:
            return None
        return await repository.upsert_user(
            session,
            telegram_id=telegram_user.id,
            username=telegram_user.username,
            first_name=telegram_user.first_name,
            telegram_language=telegram_user.language_code,
            source=source,
        )


async def forget_old_updates(
    sessionmaker: async_sessionmaker[AsyncSession], keep: timedelta = PROCESSED_UPDATES_KEPT
) -> int:
    """Drop the de-duplication records Telegram can no longer redeliver (run at startup, so the table
    does not grow forever); returns how many."""
    async with sessionmaker() as session, session.begin():
        forgotten = await repository.forget_processed_updates(session, before=utc_now() - keep)
    if forgotten:
        logger.info("Forgot %d processed update(s) older than %s", forgotten, keep)
    return forgotten
