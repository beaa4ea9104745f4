"""The lead outbox: leads are written first (bot.handlers.leads, in the update's transaction), then this
background sender posts each pending lead's card to SALES_CHAT_ID (optionally a forum topic).

- **When.** At start every pending lead is taken (SQLite: this one process; on PostgreSQL only the due
  ones, so replicas do not take each other's), then whatever is due, woken by a new lead (`wake`) or
  by the earliest retry, at least every POLL_INTERVAL_S.
- **Once.** A lead is claimed (its next attempt pushed CLAIM_S ahead) in a short transaction before it
  is sent, and marked sent right after: two replicas never send the same lead. A crash between
  Telegram's answer and that mark sends it again after the restart (Telegram has no idempotent send).
- **Failures.** Any refusal (400 e.g. the bot not in the group yet, 403, 429 with its retry_after, 5xx,
  the network) is retried with exponential back-off, BACKOFF_BASE_S doubling up to BACKOFF_MAX_S; after
  MAX_ATTEMPTS the lead is marked failed (visible in the admin stats), with its last error kept.
- Without SALES_CHAT_ID nothing is sent: leads stay pending (and are logged when written).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from datetime import timedelta

from aiogram import Bot
from aiogram.exceptions import TelegramAPIError, TelegramRetryAfter
from aiohttp import ClientError
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from bot.db import leads as lead_db
from bot.db.models import utc_now

log = logging.getLogger(__name__)

MAX_ATTEMPTS = 8
"""Attempts before a lead is marked failed (with the default back-off: about 10 minutes of retries)."""
BACKOFF_BASE_S = 5.0
BACKOFF_MAX_S = 3600.0
POLL_INTERVAL_S = 30.0
CLAIM_S = 120.0
"""How long a sender owns a lead it is sending; longer than any send with its 429 retries."""
BATCH = 20


def backoff_s(attempts: int) -> float:
    """The wait after the ``attempts``-th failed attempt."""
    return float(min(BACKOFF_BASE_S * 2 ** max(attempts - 1, 0), BACKOFF_MAX_S))


class LeadOutbox:
    def __init__(
        self,
        sessionmaker: async_sessionmaker[AsyncSession],
        chat_id: int | None,
        topic_id: int | None = None,
        *,
        single_process: bool = True,
    ) -> None:
        self.sessionmaker = sessionmaker
        self.chat_id = chat_id
        self.topic_id = topic_id
        self.single_process = single_process
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    @classmethod
    def for_engine(
        cls,
        engine: AsyncEngine,
        sessionmaker: async_sessionmaker[AsyncSession],
        chat_id: int | None,
        topic_id: int | None,
    ) -> LeadOutbox:
        return cls(sessionmaker, chat_id, topic_id, single_process=engine.dialect.name == "sqlite")

    @property
    def enabled(self) -> bool:
        return self.chat_id is not None

    def wake(self) -> None:
        """A lead was written (and committed): look now, not at the next poll."""
        self._wake.set()

    async def start(self, bot: Bot) -> None:
        """Dispatcher startup: deliver what is pending, then keep delivering in the background."""
        if not self.enabled:
            log.info("SALES_CHAT_ID is not set: leads are stored, not sent")
            return
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._run(bot), name="lead-outbox")

    async def stop(self) -> None:
        """Dispatcher shutdown: a send in flight is cancelled; its lead stays pending (claimed a while)."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _run(self, bot: Bot) -> None:
        first = True
        while True:
            self._wake.clear()
            delay = POLL_INTERVAL_S
            try:
                await self.deliver_due(bot, all_of_them=first and self.single_process)
                first = False
                async with self.sessionmaker() as session:
                    due = await lead_db.next_attempt_at(session)
                if due is not None:
                    delay = min(max((due - utc_now()).total_seconds(), 0.05), POLL_INTERVAL_S)
            except Exception:
                log.exception("lead outbox: delivery round failed; retrying later")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), delay)

    async def deliver_due(self, bot: Bot, *, all_of_them: bool = False) -> int:
        """Send the due leads' cards; how many were sent."""
        assert self.chat_id is not None
        now = utc_now()
        async with self.sessionmaker() as session:
            ids = await lead_db.due_lead_ids(session, now=now, all_of_them=all_of_them, limit=BATCH)
        sent = 0
        for lead_id in ids:
            now = utc_now()
            async with self.sessionmaker() as session, session.begin():
                lead = await lead_db.claim_lead(
                    session, lead_id, now=now, until=now + timedelta(seconds=CLAIM_S), all_of_them=all_of_them
                )
                card = str(lead.summary.get("card") or f"Lead #{lead.id}") if lead is not None else None
                attempts = lead.attempts if lead is not None else 0
            if card is None:
                continue
            try:
                await bot.send_message(self.chat_id, card, message_thread_id=self.topic_id)
            except (TelegramAPIError, ClientError, TimeoutError, OSError) as e:
                await self._failed(lead_id, attempts + 1, e)
                continue
            async with self.sessionmaker() as session, session.begin():
                await lead_db.mark_sent(session, lead_id, now=utc_now())
            log.info("lead #%s delivered to the sales chat", lead_id)
            sent += 1
        return sent

    async def _failed(self, lead_id: int, attempts: int, error: Exception) -> None:
        text = f"{type(error).__name__}: {error}"
        if attempts >= MAX_ATTEMPTS:
            retry_at = None
            log.error("lead #%s not delivered after %d attempts, marked failed: %s", lead_id, attempts, text)
        else:
            wait = backoff_s(attempts)
            if isinstance(error, TelegramRetryAfter):
                wait = max(wait, float(error.retry_after))
            retry_at = utc_now() + timedelta(seconds=wait)
            log.warning(
                "lead #%s not delivered (attempt %d): %s; retrying in %.1f s", lead_id, attempts, text, wait
            )
        async with self.sessionmaker() as session, session.begin():
            await lead_db.mark_attempt_failed(session, lead_id, error=text, retry_at=retry_at)
