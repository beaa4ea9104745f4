""" "typing…" while an answer takes long: `sendChatAction` once an update has gone `TYPING_AFTER_S`
without the bot answering in its chat.

A timer, not a task held open: nothing waits on it, nothing (no transaction, no connection, no user
lock) is held for it, and the update's own work never waits for the chat action's call. The timer is
cancelled when the update's first answer (a message sent or edited in its chat) has gone out, and
when the update is finished, so a fast answer sends no chat action at all. Telegram shows the action
for up to 5 s or until the bot's next message, whichever comes first.
"""

from __future__ import annotations

import asyncio
import logging
from contextvars import ContextVar

from aiogram import Bot
from aiogram.client.session.middlewares.base import BaseRequestMiddleware, NextRequestMiddlewareType
from aiogram.enums import ChatAction
from aiogram.exceptions import TelegramAPIError
from aiogram.methods import AnswerCallbackQuery, Response, SendChatAction, TelegramMethod
from aiogram.methods.base import TelegramType
from aiogram.types import Update
from aiohttp import ClientError

log = logging.getLogger(__name__)

TYPING_AFTER_S = 1.0
"""How long an answer may take before the chat shows "typing…": about where a wait starts to feel
like one (an answer usually comes within ~50 ms; under a crowd or a slow Bot API it can take longer)."""

_typing: ContextVar[Typing | None] = ContextVar("typing", default=None)


class Typing:
    """The chat action of one update: sent once after ``after`` seconds unless answered before."""

    def __init__(self, bot: Bot, chat_id: int, after: float) -> None:
        self.bot = bot
        self.chat_id = chat_id
        self.done = False
        self.task: asyncio.Task[None] | None = None
        self._timer = asyncio.get_running_loop().call_later(after, self._fire)

    def _fire(self) -> None:
        if not self.done:
            self.task = asyncio.create_task(self._send(), name=f"typing-{self.chat_id}")

    async def _send(self) -> None:
        try:
            await self.bot.send_chat_action(self.chat_id, ChatAction.TYPING)
        except (TelegramAPIError, ClientError, TimeoutError, OSError) as e:
            log.info("typing action in chat %s not sent: %s", self.chat_id, e)

    def stop(self) -> None:
        """The answer is out (or the update is over): no chat action from now on."""
        self.done = True
        self._timer.cancel()


def private_chat_of(update: Update) -> int | None:
    """The private chat a message or button press comes from (groups: the bot answers few there)."""
    if update.message is not None:
        chat = update.message.chat
    elif update.callback_query is not None and update.callback_query.message is not None:
        chat = update.callback_query.message.chat
    else:
        return None
    return chat.id if chat.type == "private" else None


def start_typing(bot: Bot, update: Update, after: float) -> Typing | None:
    """Arm the timer for this update (in its context: its Telegram calls stop it); None: no chat."""
    chat_id = private_chat_of(update)
    if chat_id is None:
        return None
    typing = Typing(bot, chat_id, after)
    _typing.set(typing)
    return typing


class StopTypingOnAnswer(BaseRequestMiddleware):
    """Bot session middleware: a call of the update (other than a button's answer and the chat
    action itself) that reached Telegram is its answer: the update's typing timer stops."""

    async def __call__(
        self,
        make_request: NextRequestMiddlewareType[TelegramType],
        bot: Bot,
        method: TelegramMethod[TelegramType],
    ) -> Response[TelegramType]:
        response = await make_request(bot, method)
        typing = _typing.get()
        if typing is not None and not isinstance(method, AnswerCallbackQuery | SendChatAction):
            typing.stop()
        return response
