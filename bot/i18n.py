"""Languages: aiogram-i18n with Fluent files in `bot/locales/<lang>/`, the choice kept in the users table."""

from __future__ import annotations

from collections.abc import Generator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from aiogram.types import User as TelegramUser
from aiogram_i18n import I18nContext, I18nMiddleware
from aiogram_i18n.cores import FluentRuntimeCore
from aiogram_i18n.managers import BaseManager

from bot.db import users
from bot.db.models import User
from bot.db.work import UpdateWork
from core.language.words import LANGUAGES

LOCALES_DIR = Path(__file__).parent / "locales"
# Telegram language codes answered in Russian; any other known code gets English.
RUSSIAN_SPEAKING = ("ru", "uk", "be", "kk", "uz", "ky", "tg", "hy", "az")


def language_for(telegram_code: str | None, default: str) -> str:
    if not telegram_code:
        return default
    return "ru" if telegram_code.split("-")[0].lower() in RUSSIAN_SPEAKING else "en"


class UserLocaleManager(BaseManager):
    """The user's `/lang` choice from the users table; else their Telegram language; else the default."""

    def __init__(self, default_locale: str) -> None:
        super().__init__(default_locale=default_locale)

    async def get_locale(
        self, event_from_user: TelegramUser | None = None, db_user: User | None = None
    ) -> str:
        default = self.default_locale or LANGUAGES[0]
        if db_user is not None and db_user.language in LANGUAGES:
            return db_user.language
        return language_for(event_from_user.language_code if event_from_user else None, default)

    async def set_locale(
        self,
        locale: str,
        work: UpdateWork | None = None,
        event_from_user: TelegramUser | None = None,
        db_user: User | None = None,
        **_: Any,
    ) -> None:
        if work is None or event_from_user is None:
            return
        await work.write(users.set_language, event_from_user.id, locale)
        if db_user is not None:
            db_user.language = locale


class UpdateI18nMiddleware(I18nMiddleware):
    """aiogram-i18n's middleware, whose context lets go of the update's data once the update was
    handled. The context holds the handler data and the data holds the context: a cycle that kept
    every update's data (its event, its FSM context, its unit of work, its user's row) in memory
    until the next garbage collection, whose middle generation then stopped the bot for ~50 ms in a
    crowd (bench/README.md). Only `I18nContext.set_locale` reads the data, while the update is
    handled."""

    @contextmanager
    def use_context(
        self, locale: str | None = None, data: dict[str, Any] | None = None
    ) -> Generator[I18nContext, None, None]:
        with super().use_context(locale, data) as context:
            try:
                yield context
            finally:
                context.data = {}


def build_i18n(default_language: str) -> I18nMiddleware:
    return UpdateI18nMiddleware(
        # Each message is compiled when first formatted (Fluent caches it), not all of them before
        # the first poll.
        core=FluentRuntimeCore(path=LOCALES_DIR / "{locale}", pre_compile=False),
        manager=UserLocaleManager(default_language),
        default_locale=default_language,
    )
