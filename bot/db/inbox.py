"""The inbox's database side: an update is stored before Telegram forgets it, and owned while handled.

- **Receive**: a poll batch (or the one webhook update) is inserted into ``processed_updates`` with
  its payload in one short transaction, *then* confirmed to Telegram; a repeated delivery is dropped
  (the unique ``(bot_id, update_id)`` decides, also between replicas). `Prepare` readies the new
  updates' first contact in a transaction right after (bot.db.arrivals).
- **Own**: a receiver owns the pending updates it took for a `LEASE`, renewed while it handles them;
  one whose lease ran out may be taken over. A handled update is marked finished (its payload
  cleared). The dispatcher that handles them: bot.db.inbox_dispatcher. The contract:
  docs/persistence.md.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from datetime import timedelta
from typing import Any

from aiogram import Bot
from aiogram.types import Update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.db import processed_updates
from bot.db.engine import statements_commit_alone
from bot.db.models import utc_now
from bot.received_updates import ReceivedUpdate

log = logging.getLogger(__name__)

Arrivals = tuple[Bot, Sequence[Update]]
LEASE = timedelta(seconds=8)
"""How long a receiver owns a pending update before another replica may take it over, unless its
heartbeat renews it: a replica killed with updates in hand has them taken over within about
LEASE + the sweep interval."""


def update_payload(update: Update) -> dict[str, Any]:
    """The update as Telegram sent it (JSON), to store and parse again after a crash: a polled one's
    own (bot.received_updates), else dumped from the model."""
    sent = update.as_sent if isinstance(update, ReceivedUpdate) else None
    return sent if sent is not None else update.model_dump(mode="json", exclude_none=True, by_alias=True)


Prepare = Callable[[AsyncSession, Bot, Sequence[Update]], Awaitable[Callable[[], None]]]
"""What the receipt also does for the new updates of a batch, in a transaction of its own right after
it (bot.db.arrivals): given the session, the bot and the updates, it returns what to do once that
transaction committed."""


class Inbox:
    """The database side: receive, take over, finish, prune (each one short transaction)."""

    def __init__(
        self,
        sessionmaker: async_sessionmaker[AsyncSession],
        lease: timedelta = LEASE,
        prepare: Prepare | None = None,
    ) -> None:
        self.sessionmaker = sessionmaker
        self.lease = lease
        self.prepare = prepare

    async def receive(
        self, bot_id: int, updates: list[tuple[int, dict[str, Any]]], *, arrivals: Arrivals | None = None
    ) -> set[int]:
        """Record the updates (id, payload); the ids that are new. ``arrivals``: the bot and the
        parsed updates, for `prepare`."""
        async with self.sessionmaker() as session:
            async with session.begin():
                if self.prepare is None:  # one statement (`Prepare` follows on this connection)
                    await statements_commit_alone(session)
                fresh = await processed_updates.receive_updates(
                    session, bot_id=bot_id, updates=updates, lease_until=utc_now() + self.lease
                )
            if self.prepare is not None and arrivals is not None and fresh:
                await self._prepare(session, arrivals, fresh)
        return fresh

    async def _prepare(self, session: AsyncSession, arrivals: Arrivals, fresh: set[int]) -> None:
        bot, updates = arrivals
        assert self.prepare is not None
        try:
            async with session.begin():  # the same connection: the receipt's session is still open
                remember = await self.prepare(
                    session, bot, [update for update in updates if update.update_id in fresh]
                )
        except Exception:  # only a shortcut: each update then reads and writes for itself
            log.exception("could not prepare %d received update(s); handled without", len(fresh))
            return
        remember()

    async def take_pending(self, bot_id: int, *, all_of_them: bool) -> list[tuple[int, dict[str, Any]]]:
        now = utc_now()
        async with self.sessionmaker() as session, session.begin():
            expired_before = None if all_of_them else now
            return await processed_updates.take_pending_updates(
                session, bot_id=bot_id, lease_until=now + self.lease, expired_before=expired_before
            )

    async def renew(self, bot_id: int, update_ids: Sequence[int]) -> int:
        """The heartbeat: keep owning these pending updates for another lease."""
        async with self.sessionmaker() as session, session.begin():
            return await processed_updates.renew_leases(
                session, bot_id=bot_id, update_ids=update_ids, lease_until=utc_now() + self.lease
            )

    async def finish(self, bot_id: int, update_id: int) -> None:
        async with self.sessionmaker() as session, session.begin():
            await processed_updates.finish_update(session, bot_id=bot_id, update_id=update_id)

    async def pending_count(self, bot_id: int) -> int:
        async with self.sessionmaker() as session:
            return len(await processed_updates.pending_update_ids(session, bot_id=bot_id))
