"""`ctx`: what a dialog handler needs (FSM, texts, database, catalogue), injected by a middleware."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from aiogram import BaseMiddleware
from aiogram.enums import ChatType
from aiogram.fsm.context import FSMContext
from aiogram.types import Message, TelegramObject
from aiogram.types import User as TelegramUser
from aiogram_i18n import I18nContext
from sqlalchemy.ext.asyncio import AsyncSession

from bot.config import Settings
from core.catalog import Catalog

log = logging.getLogger(__name__)


@dataclass
class Ctx:
    state: FSMContext
    i18n: I18nContext
    db: AsyncSession
    catalog: Catalog
    settings: Settings
    telegram_id: int
    user_id: int | None = None  # our users.id of the sender (bot.db.middleware), when known

    def tr(self, key: str, **args: Any) -> str:
        return self.i18n.get(key, **args)

    @property
    def lang(self) -> str:
        return self.i18n.locale


class DialogContextMiddleware(BaseMiddleware):
    """Inner middleware for messages and callback queries: puts `ctx` into the handler data."""

    async def __call__(
        self,
        handler: Callable[[TelegramObject, dict[str, Any]], Awaitable[Any]],
        event: TelegramObject,
        data: dict[str, Any],
    ) -> Any:
        user: TelegramUser | None = data.get("event_from_user")
        if user is None and isinstance(event, Message) and event.chat.type == ChatType.PRIVATE:
            # A private chat is with its one user, the sender; without one (no `from`: a forged or
            # broken update) there is nobody to answer and no dialog to run. Groups go on: a message
            # sent on behalf of a channel or by an anonymous admin has none either, and is answered.
            log.info("private message %s in chat %s has no sender: ignored", event.message_id, event.chat.id)
            return None
        state: FSMContext | None = data.get("state")
        if user is not None and state is not None and "db" in data and "i18n" in data:
            db_user = data.get("db_user")
            data["ctx"] = Ctx(
                state, data["i18n"], data["db"], data["catalog"], data["settings"], user.id,
                user_id=db_user.id if db_user is not None else None,
            )  # fmt: skip
        return await handler(event, data)
