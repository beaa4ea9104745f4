"""The lead outbox: leads are written first (bot.handlers.leads, in the update's transaction), then this
background sender posts each pending lead's card to SALES_CHAT_ID (optionally a forum topic).

- **When.** At start every undelivered lead, then whatever is due, woken by a new lead (`wake`) or by
  the earliest retry, at least every POLL_INTERVAL_S (`_run`).
- **Once.** Two replicas never send the same lead; follow-ups edit the sent card (`deliver_due`).
- **Failures.** Retried with exponential back-off while the lead is fresh, then marked failed; the
  admins are told once (`_failed`, `alert_admins`). The user's confirmation reads "saved" until the
  card is delivered, then "accepted" (`tell_users`). Without SALES_CHAT_ID nothing is sent (`enabled`).
- **CRMs.** With a CRM set (bot.crm), ``crm`` (bot.crm.push.CrmPush) pushes each lead there too, in a
  task of its own with its own state per destination, the same back-off and one admin alert.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterable
from datetime import datetime, timedelta
from html import escape
from typing import TYPE_CHECKING

from aiogram import Bot
from aiogram.exceptions import (
    TelegramAPIError,
    TelegramBadRequest,
    TelegramForbiddenError,
    TelegramRetryAfter,
)
from aiogram.types import InlineKeyboardMarkup
from aiohttp import ClientError
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from bot import leads, tasks
from bot.backoff import doubling_s
from bot.db import leads as lead_db
from bot.db.models import LEAD_UPDATED, Lead, utc_now
from bot.metrics import Tally

if TYPE_CHECKING:
    from bot.crm.push import CrmPush

log = logging.getLogger(__name__)

LEAD_FRESH_FOR = timedelta(days=7)
"""How long an undelivered lead is retried; older, a failure marks it failed (`/leads resend`)."""
BACKOFF_BASE_S = 5.0
BACKOFF_MAX_S = 900.0
"""The longest wait between two attempts: a sales chat back after an outage gets its leads within it."""
ALERT_AFTER_ATTEMPTS = 4
"""Failed attempts of a lead (with the default back-off about 75 s) before the admins are told."""
POLL_INTERVAL_S = 30.0
CLAIM_S = 120.0
"""How long a sender owns a lead it is sending; longer than any send with its 429 retries."""
BATCH = 20
ALERT_LISTED = 10
"""Lead ids an admin alert names (the rest counted)."""
SEND_ERRORS = (TelegramAPIError, ClientError, TimeoutError, OSError)

Translate = Callable[..., str]


def backoff_s(attempts: int) -> float:
    """The wait after the ``attempts``-th failed attempt."""
    return doubling_s(attempts, BACKOFF_BASE_S, BACKOFF_MAX_S)


def fresh(created_at: datetime, now: datetime) -> bool:
    return now - created_at < LEAD_FRESH_FOR


def status_of(lead: Lead) -> leads.Status:
    """What the card shows of the lead's claim and qualification (the card has "Беру" until claimed)."""
    return leads.Status(
        created_at=lead.created_at,
        need_when=lead.need_when,
        need_for=lead.need_for,
        claimed_by_name=lead.claimed_by_name,
        claimed_at=lead.claimed_at,
    )


class LeadOutbox:
    def __init__(
        self,
        sessionmaker: async_sessionmaker[AsyncSession],
        chat_id: int | None,
        topic_id: int | None = None,
        *,
        single_process: bool = True,
        admin_ids: Iterable[int] = (),
        tr: Translate | None = None,
        crm: CrmPush | None = None,
    ) -> None:
        self.sessionmaker = sessionmaker
        self.crm = crm
        self.chat_id = chat_id
        self.topic_id = topic_id
        self.single_process = single_process
        self.admin_ids = tuple(sorted(admin_ids))
        self.tr = tr
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._alerted = False  # the admins were told of this outage (until a card is delivered)
        self.sends = Tally()  # this process's attempts: delivered / failed (bot.metrics)

    @classmethod
    def for_engine(
        cls,
        engine: AsyncEngine,
        sessionmaker: async_sessionmaker[AsyncSession],
        chat_id: int | None,
        topic_id: int | None,
        *,
        admin_ids: Iterable[int] = (),
        tr: Translate | None = None,
        crm: CrmPush | None = None,
    ) -> LeadOutbox:
        return cls(
            sessionmaker,
            chat_id,
            topic_id,
            single_process=engine.dialect.name == "sqlite",
            admin_ids=admin_ids,
            tr=tr,
            crm=crm,
        )

    @property
    def enabled(self) -> bool:
        """SALES_CHAT_ID is set; without it nothing is sent: leads stay pending (and are logged when
        written)."""
        return self.chat_id is not None

    def wake(self) -> None:
        """A lead was written (and committed): look now, not at the next poll."""
        self._wake.set()
        if self.crm is not None:
            self.crm.wake()

    async def lead_claimed(self, session: AsyncSession, lead: Lead, *, by: str) -> int:
        """A manager took the lead: `lead.claimed` for the CRMs that take it, in the caller's
        transaction (call `wake()` after its commit); how many (0 without a CRM)."""
        if self.crm is None:
            return 0
        return await self.crm.lead_claimed(session, lead, by=by)

    async def lead_qualified(self, session: AsyncSession, lead: Lead) -> int:
        """The user answered the optional questions: `lead.qualified` for the CRMs that take it, in
        the caller's transaction (call `wake()` after its commit); how many (0 without a CRM)."""
        if self.crm is None:
            return 0
        return await self.crm.lead_qualified(session, lead)

    async def start(self, bot: Bot) -> None:
        """Dispatcher startup: deliver what is pending, then keep delivering in the background."""
        if self.crm is not None:
            await self.crm.start(bot)
        if not self.enabled:
            log.info("SALES_CHAT_ID is not set: leads are stored, not sent")
            return
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._run(bot), name="lead-outbox")

    async def stop(self) -> None:
        """Dispatcher shutdown: a send in flight is cancelled; its lead stays pending (claimed a while)."""
        if self.crm is not None:
            await self.crm.stop()
        await tasks.cancel(self._task)
        self._task = None

    async def _run(self, bot: Bot) -> None:
        """At start every undelivered lead is taken (SQLite: this one process; on PostgreSQL only the
        due ones, so replicas do not take each other's), then whatever is due, woken by a new lead
        (`wake`) or by the earliest retry, at least every POLL_INTERVAL_S."""
        first = True
        while True:
            self._wake.clear()
            delay = POLL_INTERVAL_S
            try:
                await self.deliver_due(bot, all_of_them=first and self.single_process)
                first = False
                await self.tell_users(bot)
                await self.alert_admins(bot)
                async with self.sessionmaker() as session:
                    due = await lead_db.next_attempt_at(session)
                if due is not None:
                    delay = min(max((due - utc_now()).total_seconds(), 0.05), POLL_INTERVAL_S)
            except Exception:
                log.exception("lead outbox: delivery round failed; retrying later")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), delay)

    async def deliver_due(self, bot: Bot, *, all_of_them: bool = False) -> int:
        """Send (or edit) the due leads' cards; how many were delivered.

        A lead is claimed (its next attempt pushed CLAIM_S ahead) in a short transaction before it is
        sent, and marked sent right after: two replicas never send the same lead. A crash between
        Telegram's answer and that mark sends it again after the restart (Telegram has no idempotent
        send). A note that joined a sent card (bot.db.leads.add_note), a manager's claim or the user's
        qualification answers make it `updated`: the card is edited in place (sent anew if the sales
        chat deleted it). A card nobody claimed carries the "Беру" button."""
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
                if lead is None:
                    continue
                status = status_of(lead)
                text = leads.full_card(
                    self.tr, str(lead.summary.get("card") or f"📩 #{lead.id}"), lead.notes or [], status
                )
                markup = leads.claim_keyboard(self.tr, lead.id, status)
                edit = lead.card_message_id if lead.delivery_status == LEAD_UPDATED else None
                revision, attempts, created_at = lead.revision, lead.attempts, lead.created_at
            try:
                message_id = await self._deliver(bot, text, edit, markup)
            except SEND_ERRORS as e:
                self.sends.add("failed")
                await self._failed(lead_id, attempts + 1, created_at, e)
                continue
            self.sends.add("delivered")
            async with self.sessionmaker() as session, session.begin():
                await lead_db.mark_sent(
                    session, lead_id, now=utc_now(), message_id=message_id, revision=revision
                )
            log.info("lead #%s delivered to the sales chat", lead_id)
            self._alerted = False
            sent += 1
        return sent

    async def _deliver(
        self, bot: Bot, text: str, edit: int | None, markup: InlineKeyboardMarkup | None
    ) -> int | None:
        """The card in the sales chat: edited in place, else sent; its message id (None: unchanged)."""
        assert self.chat_id is not None
        if edit is not None:
            try:
                await bot.edit_message_text(text, chat_id=self.chat_id, message_id=edit, reply_markup=markup)
                return edit
            except TelegramBadRequest as e:
                if "not modified" in e.message:
                    return edit
                if "not found" not in e.message and "can't be edited" not in e.message:
                    raise
                log.info("lead card %s cannot be edited (%s): sending it anew", edit, e.message)
        message = await bot.send_message(
            self.chat_id, text, message_thread_id=self.topic_id, reply_markup=markup
        )
        return message.message_id

    async def _failed(self, lead_id: int, attempts: int, created_at: datetime, error: Exception) -> None:
        """Any refusal (400 e.g. the bot not in the group yet, 403, 429 with its retry_after, 5xx, the
        network) is retried with exponential back-off, BACKOFF_BASE_S doubling up to BACKOFF_MAX_S, for
        as long as the lead is fresh (LEAD_FRESH_FOR), after a restart too; then it is marked failed
        (the admin command `/leads resend` tries again)."""
        text = f"{type(error).__name__}: {error}"
        now = utc_now()
        if not fresh(created_at, now):
            retry_at = None
            log.error("lead #%s not delivered after %d attempts, marked failed: %s", lead_id, attempts, text)
        else:
            wait = backoff_s(attempts)
            if isinstance(error, TelegramRetryAfter):
                wait = max(wait, float(error.retry_after))
            retry_at = now + timedelta(seconds=wait)
            log.warning(
                "lead #%s not delivered (attempt %d): %s; retrying in %.1f s", lead_id, attempts, text, wait
            )
        async with self.sessionmaker() as session, session.begin():
            await lead_db.mark_attempt_failed(session, lead_id, error=text, retry_at=retry_at)

    async def tell_users(self, bot: Bot) -> int:
        """Edit the confirmations of delivered leads from "saved" to "accepted" (the text the handler
        rendered in their language, ``summary["accepted"]``); how many. Each is
        taken first (another replica leaves it); a user who blocked the bot or a message Telegram no
        longer edits is given up, a flood wait or the network leaves it to a later round."""
        async with self.sessionmaker() as session:
            due = [
                (lead.id, lead.telegram_id, lead.confirm_message_id, lead.summary.get("accepted"))
                for lead in await lead_db.to_tell(session, limit=BATCH)
            ]
        told = 0
        for lead_id, chat_id, message_id, accepted in due:
            async with self.sessionmaker() as session, session.begin():
                if not await lead_db.mark_told(session, lead_id, now=utc_now()):
                    continue
            if not accepted or message_id is None:
                continue
            try:
                await bot.edit_message_text(str(accepted), chat_id=chat_id, message_id=message_id)
                told += 1
            except (TelegramBadRequest, TelegramForbiddenError) as e:  # for good
                log.warning("lead #%s: the user's confirmation not edited: %s", lead_id, e.message)
            except SEND_ERRORS as e:
                log.warning("lead #%s: the user's confirmation not edited yet: %s", lead_id, e)
                async with self.sessionmaker() as session, session.begin():
                    await lead_db.mark_told(session, lead_id, now=None)
                return told
        return told

    async def alert_admins(self, bot: Bot) -> bool:
        """Tell the admins once that delivery keeps failing; whether they were told now.

        After ALERT_AFTER_ATTEMPTS failures the admins (ADMIN_IDS) are told once: one message for the
        leads failing then, none more until a card is delivered again (and none for a lead they were
        told of, after a restart)."""
        async with self.sessionmaker() as session:
            failing = await lead_db.to_alert(session, min_attempts=ALERT_AFTER_ATTEMPTS, limit=BATCH * 5)
        if not failing:
            return False
        ids = [lead.id for lead in failing]
        async with self.sessionmaker() as session, session.begin():
            fresh_news = await lead_db.mark_alerted(session, ids, now=utc_now())
        told = False
        if fresh_news and not self._alerted and self.admin_ids and self.tr is not None:
            text = self._alert_text(failing)
            for admin in self.admin_ids:
                try:
                    await bot.send_message(admin, text)
                    told = True
                except SEND_ERRORS as e:
                    log.warning("admin %s not told of undelivered leads: %s", admin, e)
        self._alerted = True
        log.error("leads %s keep failing to reach the sales chat (admins told: %s)", ids, told)
        return told

    def _alert_text(self, failing: list[Lead]) -> str:
        assert self.tr is not None
        listed = ", ".join(f"#{lead.id}" for lead in failing[:ALERT_LISTED])
        if len(failing) > ALERT_LISTED:
            listed += f" (+{len(failing) - ALERT_LISTED})"
        error = leads.clip(failing[-1].last_error or "—", 300)
        return leads.render(
            self.tr,
            "lead-admin-alert",
            count=len(failing),
            leads=listed,
            error=escape(error, quote=False),
            days=LEAD_FRESH_FOR.days,
        )
