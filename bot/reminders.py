"""Nobody's lead goes cold: a background task beside the lead outbox (bot.outbox, same scheduling).

- **Reminder.** A lead whose card is in the sales chat and that nobody claimed ("Беру") within
  LEAD_REMINDER_MINUTES of the lead gets one reply to its card there: "lead #N has waited M minutes".
- **Escalation.** Still unclaimed LEAD_ESCALATE_MINUTES after the lead, the admins (ADMIN_IDS) get one
  message naming every such lead of that round.
- **Once.** Each mark (``reminded_at``, ``escalated_at``) is taken in a short transaction before the
  message, while the lead is unclaimed; a refusal that may pass (the network, a flood wait) gives the
  reminder back, tried again POLL_INTERVAL_S later. The marks live in the database: a restart
  neither forgets nor repeats them, and of several replicas only one takes each.
- **When.** At start, then at the earliest time a lead is due, at least every POLL_INTERVAL_S,
  and at once when woken (``wake``: a test moved its ``clock``, which gives "now").
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterable
from datetime import datetime, timedelta

from aiogram import Bot
from aiogram.exceptions import TelegramBadRequest, TelegramForbiddenError
from aiogram.types import ReplyParameters
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot import leads, tasks
from bot.db import leads as lead_db
from bot.db.models import utc_now
from bot.outbox import SEND_ERRORS

log = logging.getLogger(__name__)

POLL_INTERVAL_S = 30.0
MIN_WAIT_S = 0.05
BATCH = 20
LISTED = 10
"""Lead ids an escalation names (the rest counted)."""

Translate = Callable[..., str]
Clock = Callable[[], datetime]


class LeadReminders:
    def __init__(
        self,
        sessionmaker: async_sessionmaker[AsyncSession],
        chat_id: int | None,
        topic_id: int | None = None,
        *,
        remind_after: timedelta,
        escalate_after: timedelta,
        admin_ids: Iterable[int] = (),
        tr: Translate,
        clock: Clock = utc_now,
    ) -> None:
        self.sessionmaker = sessionmaker
        self.chat_id = chat_id
        self.topic_id = topic_id
        self.remind_after = remind_after
        self.escalate_after = escalate_after
        self.admin_ids = tuple(sorted(admin_ids))
        self.tr = tr
        self.clock = clock
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._refused = False  # a reminder of this round was given back, to be tried again

    def wake(self) -> None:
        """Look now (the clock moved, a card was delivered), not at the next poll."""
        self._wake.set()

    async def start(self, bot: Bot) -> None:
        """Dispatcher startup. Without SALES_CHAT_ID there are no cards to claim: nothing to remind."""
        if self.chat_id is None:
            return
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._run(bot), name="lead-reminders")

    async def stop(self) -> None:
        await tasks.cancel(self._task)
        self._task = None

    async def _run(self, bot: Bot) -> None:
        while True:
            self._wake.clear()
            delay = POLL_INTERVAL_S
            try:
                self._refused = False
                await self.remind(bot)
                await self.escalate(bot)
                # A reminder given back (Telegram unreachable) is due at once: not before the poll.
                delay = POLL_INTERVAL_S if self._refused else await self._next_delay()
            except Exception:
                log.exception("lead reminders: a round failed; retrying later")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), delay)

    async def _next_delay(self) -> float:
        async with self.sessionmaker() as session:
            remind, escalate = await lead_db.earliest_unclaimed(session)
        pairs = ((remind, self.remind_after), (escalate, self.escalate_after))
        dues = [at + after for at, after in pairs if at is not None]
        if not dues:
            return POLL_INTERVAL_S
        return min(max((min(dues) - self.clock()).total_seconds(), MIN_WAIT_S), POLL_INTERVAL_S)

    async def remind(self, bot: Bot) -> int:
        """One reply to each due card; how many were sent."""
        assert self.chat_id is not None
        now = self.clock()
        async with self.sessionmaker() as session:
            due = [
                (lead.id, int(lead.card_message_id or 0), lead.created_at)
                for lead in await lead_db.to_remind(session, due_before=now - self.remind_after, limit=BATCH)
            ]
        sent = 0
        for lead_id, card_id, created_at in due:
            async with self.sessionmaker() as session, session.begin():
                if not await lead_db.mark_reminded(session, lead_id, now=now):
                    continue  # claimed meanwhile, or another replica has it
            text = leads.render(
                self.tr, "lead-reminder", id=lead_id, minutes=leads.minutes_between(created_at, now)
            )
            try:
                await bot.send_message(
                    self.chat_id,
                    text,
                    message_thread_id=self.topic_id,
                    reply_parameters=ReplyParameters(message_id=card_id, allow_sending_without_reply=True),
                )
                sent += 1
            except (TelegramBadRequest, TelegramForbiddenError) as e:  # will not pass: not retried
                log.warning("lead #%s: reminder not sent: %s", lead_id, e.message)
            except SEND_ERRORS as e:
                log.warning("lead #%s: reminder not sent yet: %s", lead_id, e)
                async with self.sessionmaker() as session, session.begin():
                    await lead_db.mark_reminded(session, lead_id, now=None)
                self._refused = True
                return sent
        return sent

    async def escalate(self, bot: Bot) -> list[int]:
        """Tell the admins of the leads still unclaimed past the second interval; their ids."""
        now = self.clock()
        async with self.sessionmaker() as session:
            due = await lead_db.to_escalate(session, due_before=now - self.escalate_after, limit=BATCH * 5)
        if not due:
            return []
        async with self.sessionmaker() as session, session.begin():
            taken = await lead_db.mark_escalated(session, [lead.id for lead in due], now=now)
        if not taken:
            return []
        listed = ", ".join(f"#{lead_id}" for lead_id in taken[:LISTED])
        if len(taken) > LISTED:
            listed += f" (+{len(taken) - LISTED})"
        minutes = int(self.escalate_after.total_seconds() // 60)
        text = leads.render(self.tr, "lead-escalation", count=len(taken), leads=listed, minutes=minutes)
        for admin in self.admin_ids:
            try:
                await bot.send_message(admin, text)
            except SEND_ERRORS as e:
                log.warning("admin %s not told of unclaimed leads: %s", admin, e)
        log.warning("leads %s unclaimed for %d minutes (admins: %d)", taken, minutes, len(self.admin_ids))
        return taken
