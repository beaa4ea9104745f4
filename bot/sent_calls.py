"""An update handled again does not say again what it already said.

An update whose handling failed on the infrastructure (bot.db.outage) is handled again from the start
(bot.db.inbox). Its handler makes the same Telegram calls in the same order (the same update, the
same state: what it wrote was rolled back). `SentCalls` keeps, per update, the chat-changing calls
that succeeded (a message sent, edited, deleted) with Telegram's answers; the next attempt's calls are
answered from it, in order, while they match (same method), without calling Telegram. The first call
that differs ends the replay: from there on every call is made (and recorded). Calls that change
nothing the user sees twice (answerCallbackQuery, sendChatAction) are always made.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from aiogram import Bot
from aiogram.client.session.middlewares.base import BaseRequestMiddleware, NextRequestMiddlewareType
from aiogram.methods import Response, TelegramMethod
from aiogram.methods.base import TelegramType

log = logging.getLogger(__name__)

CHAT_CHANGING = frozenset({
    "sendMessage", "sendPhoto", "sendDocument", "sendMediaGroup", "sendAnimation", "sendVideo",
    "sendAudio", "sendVoice", "sendSticker", "sendLocation", "sendContact", "sendPoll", "sendInvoice",
    "copyMessage", "copyMessages", "forwardMessage", "forwardMessages",
    "editMessageText", "editMessageCaption", "editMessageMedia", "editMessageReplyMarkup", "deleteMessage",
    "deleteMessages", "pinChatMessage",
})  # fmt: skip


class SentCalls:
    """One update's chat-changing calls made so far (method, Telegram's answer), across attempts."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Response[Any]]] = []
        self._position = 0
        self._diverged = False
        self.replayed = 0  # calls answered from here (for the tests and the log)

    def new_attempt(self) -> None:
        self._position = 0
        self._diverged = False

    def answer_for(self, method: str) -> Response[Any] | None:
        """What Telegram answered to this call in an earlier attempt; None: make it."""
        if self._diverged or self._position >= len(self.calls):
            return None
        name, response = self.calls[self._position]
        if name != method:
            self._diverged = True
            del self.calls[self._position :]  # what differs from here on is not known to have happened
            return None
        self._position += 1
        self.replayed += 1
        return response

    def made(self, method: str, response: Response[Any]) -> None:
        self.calls.append((method, response))
        self._position = len(self.calls)


_current: ContextVar[SentCalls | None] = ContextVar("sent_calls", default=None)
_outside: ContextVar[bool] = ContextVar("sent_calls_outside", default=False)


@contextmanager
def attempt(sent: SentCalls) -> Iterator[SentCalls]:
    """One attempt at handling an update: its calls go through ``sent``."""
    sent.new_attempt()
    token = _current.set(sent)
    try:
        yield sent
    finally:
        _current.reset(token)


@contextmanager
def unrecorded() -> Iterator[None]:
    """Calls that are not the update's answer (the errors handler's apology or retry notice)."""
    token = _outside.set(True)
    try:
        yield
    finally:
        _outside.reset(token)


class ReplaySentCalls(BaseRequestMiddleware):
    """Bot session middleware: a call the update already made in an earlier attempt is not made again."""

    async def __call__(
        self,
        make_request: NextRequestMiddlewareType[TelegramType],
        bot: Bot,
        method: TelegramMethod[TelegramType],
    ) -> Response[TelegramType]:
        sent = _current.get()
        name = method.__api_method__
        if sent is None or _outside.get() or name not in CHAT_CHANGING:
            return await make_request(bot, method)
        earlier = sent.answer_for(name)
        if earlier is not None:
            log.debug("%s made in an earlier attempt: not made again", name)
            return earlier
        response = await make_request(bot, method)
        sent.made(name, response)
        return response
