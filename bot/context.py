"""`ctx`: what a dialog handler needs (FSM, its dialog state, texts, database, catalogue), injected by
a middleware."""

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

from bot.config import Settings
from bot.db.models import User
from bot.db.work import UpdateWork
from bot.dialog_state import DialogHolder
from core.catalogue.catalog import Catalog

log = logging.getLogger(__name__)


@dataclass
class Ctx:
    state: FSMContext
    i18n: I18nContext
    work: UpdateWork  # the update's unit of work (bot.db.work): dialog writes go into it
    catalog: Catalog
    settings: Settings
    telegram_id: int
    dialog: DialogHolder  # the update's dialog state, read once, saved once (bot.dialog_state)
    user_id: int | None = None  # our users.id of the sender (bot.db.middleware), when known
    currency: str = "RUB"  # prices are shown in it where the offer has one (`user_currency`)

    def tr(self, key: str, **args: Any) -> str:
        return self.i18n.get(key, **args)

    @property
    def lang(self) -> str:
        return self.i18n.locale

    @property
    def db(self) -> UpdateWork:
        """The update's work, as bot.dialog names it (its dialog writes go into it)."""
        return self.work


# Telegram languages whose users are shown another currency than DEFAULT_CURRENCY (Kazakh: tenge).
LANGUAGE_CURRENCIES = {"kk": "KZT"}


def user_currency(db_user: User | None, telegram_language: str | None, default: str) -> str:
    """The user's /currency choice; else their Telegram language's currency; else the default."""
    if db_user is not None and db_user.currency:
        return db_user.currency
    language = (telegram_language or "").split("-")[0].lower()
    return LANGUAGE_CURRENCIES.get(language, default)


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
        dialog = data.get("dialog")
        wired = "work" in data and "i18n" in data
        if user is not None and state is not None and dialog is not None and wired:
            db_user = data.get("db_user")
            settings = data["settings"]
            data["ctx"] = Ctx(
                state, data["i18n"], data["work"], data["catalog"], settings, user.id, dialog,
                user_id=db_user.id if db_user is not None else None,
                currency=user_currency(db_user, user.language_code, settings.default_currency),
            )  # fmt: skip
        return await handler(event, data)
