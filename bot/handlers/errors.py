"""Errors: logged with the update, the user gets an apology instead of silence.

A failure of the database, Redis or the disk (bot.db.outage) is not apologised for: the inbox keeps
the update pending and retries it; the user is told "one moment, retrying" once (bot/locales/*/retry.ftl)."""

from __future__ import annotations

import contextlib
import logging

from aiogram import Router
from aiogram.exceptions import TelegramAPIError, TelegramBadRequest, TelegramForbiddenError
from aiogram.filters import ExceptionTypeFilter
from aiogram.types import ErrorEvent
from aiogram.types import User as TelegramUser
from aiogram_i18n import I18nContext, I18nMiddleware

from bot.config import Settings
from bot.db.middleware import Receipt
from bot.db.outage import is_infrastructure
from bot.i18n import language_for
from bot.routing import FeatureRouter
from bot.sent_calls import unrecorded
from core.language.words import LANGUAGES

log = logging.getLogger(__name__)


async def on_bad_request(event: ErrorEvent) -> None:
    """Telegram refused a call (e.g. a message deleted meanwhile): nothing the user can act on."""
    log.warning("Telegram refused a request for update %s: %s", event.update.update_id, event.exception)


async def on_blocked(event: ErrorEvent) -> None:
    """The user blocked the bot or left: nobody to tell."""
    log.info("user unreachable for update %s: %s", event.update.update_id, event.exception)


def apology(
    i18n: I18nContext | None,
    i18n_middleware: I18nMiddleware | None,
    user: TelegramUser | None,
    settings: Settings | None,
    key: str = "error-generic",
) -> str | None:
    """The error text in the user's language; before the language was read from the database (that is
    what failed), in their Telegram language."""
    if i18n is not None:
        return i18n.get(key)
    if i18n_middleware is None:
        return None
    default = settings.default_language if settings else LANGUAGES[0]
    lang = language_for(user.language_code if user else None, default)
    return i18n_middleware.core.get(key, lang)


async def on_error(
    event: ErrorEvent,
    i18n: I18nContext | None = None,
    i18n_middleware: I18nMiddleware | None = None,
    event_from_user: TelegramUser | None = None,
    settings: Settings | None = None,
    update_receipt: Receipt | None = None,
) -> None:
    key = "error-generic"
    if update_receipt is not None and is_infrastructure(event.exception):
        # Not an answer: the inbox keeps the update pending and retries it (logged once per outage).
        log.debug("update %s failed on the infrastructure", event.update.update_id, exc_info=event.exception)
        update_receipt.failure = event.exception
        if update_receipt.noticed:
            return
        update_receipt.noticed = True
        key = "retry-notice"
    else:
        log.exception("update %s failed", event.update.update_id, exc_info=event.exception)
    query = event.update.callback_query
    if query is not None:
        # CallbackAnswerMiddleware has answered it if a handler ran; not if an outer middleware failed
        # first (the database is down): then this stops the button spinning. A second answer is refused.
        with contextlib.suppress(TelegramAPIError):
            await query.answer()
    text = apology(i18n, i18n_middleware, event_from_user, settings, key)
    if text is None:
        return
    update = event.update
    try:
        with unrecorded():  # not the update's answer (a retry makes that: bot.sent_calls)
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
    router = FeatureRouter(name="errors")
    router.errors.register(on_bad_request, ExceptionTypeFilter(TelegramBadRequest))
    router.errors.register(on_blocked, ExceptionTypeFilter(TelegramForbiddenError))
    router.errors.register(on_error)
    return router
