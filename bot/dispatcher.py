"""The bot's Dispatcher: the inbox's (bot.db.inbox_dispatcher), answering button presses early when their
handling is slow (bot.callback_answers), showing "typing…" when an answer is slow
(bot.typing_action), and reading the FSM state once per update (bot.storage)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from aiogram import Bot, Router
from aiogram.types import Update

from bot import callback_answers
from bot.db.group_receive import GroupReceive
from bot.db.inbox_dispatcher import InboxDispatcher
from bot.db.middleware import DbSessionMiddleware, forget_old_updates
from bot.storage import DeferredStateMiddleware
from bot.typing_action import TYPING_AFTER_S, start_typing

log = logging.getLogger(__name__)


class BotDispatcher(InboxDispatcher):
    """The inbox dispatcher, answering callback queries early when their handling is slow
    (bot.callback_answers), and showing "typing…" when an answer is slow (bot.typing_action). Its
    FSM middleware leaves reading the state to DbSessionMiddleware (one read per update, through the
    update's work)."""

    def __init__(self, *, typing_after_s: float = TYPING_AFTER_S, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.typing_after_s = typing_after_s
        self.update.outer_middleware.unregister(self.fsm)
        self.fsm = DeferredStateMiddleware(
            storage=self.fsm.storage, strategy=self.fsm.strategy, events_isolation=self.fsm.events_isolation
        )
        self.update.outer_middleware(self.fsm)
        self._forgetting: asyncio.Task[None] | None = None
        self.group_receive = GroupReceive(self.inbox)
        self.sessions: DbSessionMiddleware | None = None  # the database middleware (bot.app.build_dispatcher)
        # Told of each update handled and its seconds (bot.metrics, where /metrics is served).
        self.on_handled: Callable[[Update, float], None] | None = None

    async def start_inbox(self, bot: Bot, *, all_of_them: bool, **kwargs: Any) -> None:
        await super().start_inbox(bot, all_of_them=all_of_them, **kwargs)
        # Old de-duplication rows are dropped once polling (or the webhook) is under way, in the
        # background: the first getUpdates need not wait for it, the pending updates go first.
        if self._forgetting is None:
            self._forgetting = asyncio.create_task(self._forget_old_updates())

    async def _forget_old_updates(self) -> None:
        try:
            await forget_old_updates(self.inbox.sessionmaker)
        except Exception:
            log.exception("could not drop old de-duplication rows; the inbox sweep retries later")

    async def drain(self, timeout: float | None = None) -> None:
        if self._forgetting is not None:
            self._forgetting.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._forgetting
            self._forgetting = None  # a dispatcher started again (tests, an embedding app) forgets again
        await super().drain(timeout)

    async def receive_webhook_update(self, bot: Bot, update: Update, payload: dict[str, Any]) -> bool:
        """As the inbox's, with the calls arriving together recorded together (bot.db.group_receive)."""
        if await self.group_receive.receive(bot, update, payload):
            self.handle_in_background(bot, update, fresh=True)
            return True
        log.info("Dropping update %s: already received", update.update_id)
        return False

    async def feed_update(self, bot: Bot, update: Update, **kwargs: Any) -> Any:
        if callback_answers.TICKET_KEY in kwargs:
            return await super().feed_update(bot, update, **kwargs)
        started = time.perf_counter()
        typing = start_typing(bot, update, self.typing_after_s)
        ticket = callback_answers.arm(bot, update, len(self.handling))
        if ticket is not None:
            kwargs[callback_answers.TICKET_KEY] = ticket
        try:
            return await super().feed_update(bot, update, **kwargs)
        finally:
            if ticket is not None:
                ticket.cancel()
            if typing is not None:
                typing.stop()
            if self.on_handled is not None:
                self.on_handled(update, time.perf_counter() - started)


def check_filters_in_place(router: Router) -> int:
    """Run the routers' synchronous filters (``F.text``, ``F.data == …``, plain predicates) in place.

    aiogram calls every synchronous filter through ``asyncio.to_thread`` (CallableObject.call in
    aiogram/dispatcher/event/handler.py), meant for blocking callables: a thread hop per filter per
    handler tried, each waiting for the GIL of a busy loop. Filters are predicates over the update,
    microseconds of work. Returns how many were changed."""
    changed = 0
    for each in router.chain_tail:
        for observer in each.observers.values():
            for handler in [observer._handler, *observer.handlers]:
                for event_filter in handler.filters or ():
                    if not event_filter.awaitable:
                        event_filter.callback = _in_place(event_filter.callback)
                        event_filter.awaitable = True
                        changed += 1
    return changed


def _in_place(callback: Callable[..., Any]) -> Callable[..., Awaitable[Any]]:
    async def call(*args: Any, **kwargs: Any) -> Any:
        return callback(*args, **kwargs)

    return call
