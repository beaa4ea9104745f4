"""The gate every message and button press passes before any handler: what is not for the bot is
dropped without a word (its own inline results posted back, group talk not addressed to it), and what
is, is throttled per sender (`bot.throttle`)."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from aiogram import BaseMiddleware, Bot
from aiogram.enums import ChatType
from aiogram.exceptions import TelegramAPIError
from aiogram.types import CallbackQuery, Message, TelegramObject
from aiogram_i18n import I18nContext

from bot.group_messages import addressed_to_bot
from bot.throttle import THROTTLE_KEY, Throttle

log = logging.getLogger(__name__)

Handler = Callable[[TelegramObject, dict[str, Any]], Awaitable[Any]]


def sender_of(message: Message) -> int:
    """Whose bucket a message takes from: the chat it speaks for (an anonymous admin's group, a
    channel), else its author (chat ids of groups and channels are negative: no clash with users)."""
    if message.sender_chat is not None:
        return message.sender_chat.id
    return message.from_user.id if message.from_user is not None else message.chat.id


class Gate(BaseMiddleware):
    """Outer middleware of the bot's root router, for ``message`` and ``callback_query``."""

    def __init__(self, throttle: Throttle | None = None) -> None:
        self.throttle = throttle or Throttle()

    async def __call__(self, handler: Handler, event: TelegramObject, data: dict[str, Any]) -> Any:
        given = data.get(THROTTLE_KEY)  # (not `or`: a Throttle with no buckets yet is falsy)
        throttle: Throttle = given if isinstance(given, Throttle) else self.throttle
        i18n: I18nContext | None = data.get("i18n")
        if isinstance(event, Message):
            bot: Bot = data["bot"]
            me = await bot.me()
            if event.via_bot is not None and event.via_bot.id == me.id:
                log.debug("message %s is our own inline result: not a question", event.message_id)
                return None
            if event.chat.type != ChatType.PRIVATE and not addressed_to_bot(event, me.username or "", me.id):
                return None
            verdict = throttle.check(sender_of(event), "message")
            if verdict == "allow":
                return await handler(event, data)
            log.info("throttled message %s from %s (%s)", event.message_id, sender_of(event), verdict)
            if verdict == "notice" and i18n is not None:
                await event.answer(i18n.get("throttled"))
            return None
        if isinstance(event, CallbackQuery):
            verdict = throttle.check(event.from_user.id, "button")
            if verdict == "allow":
                return await handler(event, data)
            log.info("throttled button press from %s (%s)", event.from_user.id, verdict)
            notice = i18n.get("throttled") if i18n is not None else None  # only now: a lookup per event
            # Answered all the same, or the button spins; the toast says why nothing happened.
            ticket = data.get("callback_ticket")
            if ticket is not None:
                await ticket.answer(text=notice)
            else:
                with contextlib.suppress(TelegramAPIError):
                    await event.answer(notice)
            return None
        return await handler(event, data)
