"""Button presses answered once: by the handler (its toast), or empty when the handler is slow.

A callback query is answered at most once (`CallbackTicket`): by the handler's ``callback_answer``
when it returns, by a timer EARLY_ANSWER_S after the update arrived, or at once when more than
BUSY_UPDATES updates are in hand (`arm`). An answer given early shows no text.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from aiogram import Bot
from aiogram.dispatcher.flags import get_flag
from aiogram.exceptions import TelegramAPIError
from aiogram.types import CallbackQuery, TelegramObject, Update
from aiogram.utils.callback_answer import CallbackAnswer, CallbackAnswerMiddleware

log = logging.getLogger(__name__)
EARLY_ANSWER_S = 0.25
"""A button press whose handler has not answered by then is answered empty (the spinner stops);
chosen to keep the spinner well inside a second (bench/README.md)."""
BUSY_UPDATES = 64
"""Updates in hand above which a button press is answered at once, empty, before any database work
(its handler would wait behind theirs); at or below it the handler answers (with its toast: "this
button is outdated", "too many presses") or the EARLY_ANSWER_S timer does."""
TICKET_KEY = "callback_ticket"


def arm(bot: Bot, update: Update, in_hand: int) -> CallbackTicket | None:
    """The ticket of a button press (None: the update is not one), answering it empty at once when
    more than BUSY_UPDATES updates are ``in_hand``, else after EARLY_ANSWER_S unless answered before."""
    if update.callback_query is None:
        return None
    ticket = CallbackTicket(bot, update.callback_query.id)
    if in_hand > BUSY_UPDATES:
        ticket.answer_now()
    else:
        ticket.answer_after(EARLY_ANSWER_S)
    return ticket


class CallbackTicket:
    """One callback query's answer, given once: by the handler's CallbackAnswer when it finishes, or
    empty by a timer when the handler has not finished within ``EARLY_ANSWER_S`` of the update's
    arrival (waiting for the user's lock, a database connection, a slow Telegram): the button stops
    spinning either way. A text set by a handler after the early answer is not shown."""

    def __init__(self, bot: Bot, query_id: str) -> None:
        self.bot = bot
        self.query_id = query_id
        self.answered = False
        self._timer: asyncio.TimerHandle | None = None
        self._early: asyncio.Task[None] | None = None

    def answer_after(self, delay: float) -> None:
        self._timer = asyncio.get_running_loop().call_later(delay, self._answer_early)

    def answer_now(self) -> None:
        """Answer empty right away, in its own task (the update goes on meanwhile)."""
        self._answer_early()

    def _answer_early(self) -> None:
        if not self.answered:
            self._early = asyncio.create_task(self.answer())

    def cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()

    async def answer(self, **fields: Any) -> None:
        if self.answered:
            if fields.get("text"):
                log.debug("callback query %s answered early; not shown: %r", self.query_id, fields["text"])
            return
        self.answered = True
        self.cancel()
        try:
            await self.bot.answer_callback_query(self.query_id, **fields)
        except TelegramAPIError as e:  # too old, or answered by the errors handler meanwhile
            log.info("callback query %s not answered: %s", self.query_id, e)


class TicketCallbackAnswerMiddleware(CallbackAnswerMiddleware):
    """aiogram's CallbackAnswerMiddleware (handlers set ``callback_answer.text`` etc.), answering
    through the update's CallbackTicket so an early answer and the handler's never both go out."""

    async def __call__(
        self,
        handler: Callable[[TelegramObject, dict[str, Any]], Awaitable[Any]],
        event: TelegramObject,
        data: dict[str, Any],
    ) -> Any:
        if not isinstance(event, CallbackQuery):
            return await handler(event, data)
        ticket: CallbackTicket = data.get(TICKET_KEY) or CallbackTicket(data["bot"], event.id)
        callback_answer = data["callback_answer"] = self.construct_callback_answer(
            properties=get_flag(data, "callback_answer"),
        )
        if not callback_answer.disabled and callback_answer.answered:
            await ticket.answer(**self._fields(callback_answer))
        # Answered once the handler returns; not when it raises: the update's transaction must roll
        # back, not be committed before this call, and the errors handler answers the query.
        result = await handler(event, data)
        if not callback_answer.disabled and not callback_answer.answered:
            await ticket.answer(**self._fields(callback_answer))
        return result

    @staticmethod
    def _fields(answer: CallbackAnswer) -> dict[str, Any]:
        return {
            "text": answer.text, "show_alert": answer.show_alert, "url": answer.url,
            "cache_time": answer.cache_time,
        }  # fmt: skip
