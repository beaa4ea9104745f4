"""Group receipt of webhook updates: the updates arriving while a receipt is being written are recorded
together, in the next one (one transaction, one statement), as a poll batch is.

Each webhook call must be on disk before it is answered 200 (bot.db.inbox: Telegram forgets an update
once answered). Alone, every call cost its own transaction and commit (a BEGIN, an INSERT, a COMMIT
and its WAL flush on PostgreSQL) before the update could even be handled, and under a crowd the calls
queued for the pool and the disk one by one. Here a call waits for the receipt in flight (if any) and
then goes with everything that came meanwhile: nothing waits when the bot is idle, and under a crowd
the commits per update fall with the crowd. Each call still gets its own answer: recorded as new, a
repeated delivery (an id seen already, also within the same group), or the receipt's error.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from aiogram import Bot
from aiogram.types import Update

from bot.db.inbox import Inbox

MAX_GROUP = 200
"""Updates per receipt at most (Telegram's getUpdates gives at most 100 a poll)."""


@dataclass
class _Arrival:
    update: Update
    payload: dict[str, Any]
    fresh: asyncio.Future[bool]


class GroupReceive:
    """The webhook updates of one bot waiting for the next receipt, and the task writing them."""

    def __init__(self, inbox: Inbox) -> None:
        self.inbox = inbox
        self._waiting: dict[int, list[_Arrival]] = {}  # bot id -> arrivals
        self._writers: dict[int, asyncio.Task[None]] = {}

    async def receive(self, bot: Bot, update: Update, payload: dict[str, Any]) -> bool:
        """Record the update; True when it is new (False: a repeated delivery). Raises what the receipt
        raised."""
        fresh = asyncio.get_running_loop().create_future()
        self._waiting.setdefault(bot.id, []).append(_Arrival(update, payload, fresh))
        if bot.id not in self._writers:
            self._writers[bot.id] = asyncio.create_task(self._write(bot), name="group-receive")
        return bool(await fresh)

    async def _write(self, bot: Bot) -> None:
        group: list[_Arrival] = []
        try:
            while waiting := self._waiting.get(bot.id):
                group, self._waiting[bot.id] = waiting[:MAX_GROUP], waiting[MAX_GROUP:]
                first: dict[int, _Arrival] = {}
                for arrival in group:  # one delivery raced itself: only the first may be new
                    first.setdefault(arrival.update.update_id, arrival)
                try:
                    fresh = await self.inbox.receive(
                        bot.id,
                        [(update_id, arrival.payload) for update_id, arrival in first.items()],
                        arrivals=(bot, [arrival.update for arrival in first.values()]),
                    )
                except Exception as e:
                    _settle(group, e)
                    continue
                for arrival in group:
                    update_id = arrival.update.update_id
                    if not arrival.fresh.done():
                        arrival.fresh.set_result(update_id in fresh and first[update_id] is arrival)
        finally:
            del self._writers[bot.id]
            left = self._waiting.pop(bot.id, [])
            _settle(group + left, asyncio.CancelledError())


def _settle(group: list[_Arrival], error: BaseException) -> None:
    for arrival in group:
        if arrival.fresh.done():
            continue
        if isinstance(error, asyncio.CancelledError):
            arrival.fresh.cancel()
        else:
            arrival.fresh.set_exception(error)
