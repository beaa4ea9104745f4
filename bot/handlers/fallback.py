"""Last resort handlers: buttons nobody handles any more, and messages that are not text."""

from __future__ import annotations

from aiogram import Router
from aiogram.types import CallbackQuery, Message
from aiogram.utils.callback_answer import CallbackAnswer
from aiogram_i18n import I18nContext

from bot.routing import FeatureRouter


async def on_unknown_button(query: CallbackQuery, i18n: I18nContext, callback_answer: CallbackAnswer) -> None:
    """A button from an old message or an older version of the bot: a polite answer, nothing else."""
    callback_answer.text = i18n.get("stale-button")


async def on_anything_else(message: Message, i18n: I18nContext) -> None:
    await message.answer(i18n.get("hint-idle"))


def make_router() -> Router:
    """A fresh router per Dispatcher (a router attaches to one parent only)."""
    router = FeatureRouter(name="fallback")
    router.callback_query.register(on_unknown_button)
    router.message.register(on_anything_else)
    return router
