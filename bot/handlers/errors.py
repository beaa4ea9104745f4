"""Errors: logged with the update, the user gets an apology instead of silence."""

from __future__ import annotations

import logging

from aiogram import Router
from aiogram.exceptions import TelegramBadRequest, TelegramForbiddenError
from aiogram.filters import ExceptionTypeFilter
from aiogram.types import ErrorEvent
from aiogram_i18n import I18nContext

log = logging.getLogger(__name__)


async def on_bad_request(event: ErrorEvent) -> None:
    """Telegram refused a call (e.g. a message deleted meanwhile): nothing the user can act on."""
    log.warning("Telegram refused a request for update %s: %s", event.update.update_id, event.exception)


async def on_blocked(event: ErrorEvent) -> None:
    """The user blocked the bot or left: nobody to tell."""
    log.info("user unreachable for update %s: %s", event.update.update_id, event.exception)


async def on_error(event: ErrorEvent, i18n: I18nContext | None = None) -> None:
    log.exception("update %s failed", event.update.update_id, exc_info=event.exception)
    if i18n is None:
        return
    text = i18n.get("error-generic")
    update = event.update
    try:
        if update.callback_query is not None:
            # CallbackAnswerMiddleware answers the query itself; tell the user in the chat.
            if update.callback_query.message is not None and update.callback_query.bot is not None:
                await update.callback_query.bot.send_message(update.callback_query.message.chat.id, text)
        elif update.message is not None:
            await update.message.answer(text)
    except Exception:
        log.exception("could not tell the user about the error")


def make_router() -> Router:
    """A fresh router per Dispatcher (a router attaches to one parent only)."""
    router = Router(name="errors")
    router.errors.register(on_bad_request, ExceptionTypeFilter(TelegramBadRequest))
    router.errors.register(on_blocked, ExceptionTypeFilter(TelegramForbiddenError))
    router.errors.register(on_error)
    return router
