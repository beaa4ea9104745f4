"""The CRM half of the lead outbox (bot.outbox.LeadOutbox runs it beside the sales chat's cards, in a
task of its own: a CRM that hangs or refuses never delays a card).

Each round: a `lead.created` delivery is enqueued for every configured destination and fresh lead
that has none (so a lead is stored first, whatever the CRMs do, and one written before a CRM was set
is pushed when it is, while fresh); then every due delivery is taken (claimed as the cards are),
pushed with its idempotency key and marked sent, or failed with the cards' back-off
(bot.outbox.backoff_s, LEAD_FRESH_FOR; a 429's Retry-After respected). After ALERT_AFTER_ATTEMPTS
failures the admins are told once, while any delivery they were told of is pending (a restart or
another replica does not tell them again).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterable, Sequence
from datetime import timedelta
from html import escape
from typing import Any

import aiohttp
from aiogram import Bot
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot import leads as lead_texts
from bot import outbox as box
from bot import tasks
from bot.crm import CRM_LEAD_CLAIMED, CRM_LEAD_CREATED, CRM_LEAD_QUALIFIED, CrmRefused, Destination, payload
from bot.db import leads as lead_db
from bot.db.models import CrmDelivery, Lead, User, utc_now
from bot.metrics import Tally

log = logging.getLogger(__name__)

CRM_TIMEOUT_S = 15.0
"""The longest one push may take (all its requests); past it the attempt failed, retried later."""
PUSH_ERRORS = (CrmRefused, aiohttp.ClientError, TimeoutError, OSError, ValueError, KeyError, TypeError)
"""A CRM's refusal, the network, or an answer not as its docs say: retried with back-off."""

Translate = Callable[..., str]


class CrmPush:
    def __init__(
        self,
        sessionmaker: async_sessionmaker[AsyncSession],
        destinations: Sequence[Destination],
        *,
        tr: Translate,
        lang: str,
        single_process: bool = True,
        admin_ids: Iterable[int] = (),
    ) -> None:
        self.sessionmaker = sessionmaker
        self.destinations = {d.name: d for d in destinations}
        self.tr = tr
        self.lang = lang
        self.single_process = single_process
        self.admin_ids = tuple(sorted(admin_ids))
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._http: aiohttp.ClientSession | None = None
        self.pushes = Tally()  # this process's attempts: "<destination>:delivered" / ":failed" (bot.metrics)

    @property
    def names(self) -> list[str]:
        return sorted(self.destinations)

    def wake(self) -> None:
        self._wake.set()

    async def lead_claimed(self, session: AsyncSession, lead: Lead, *, by: str, at: Any = None) -> int:
        """Enqueue `lead.claimed` (in the caller's transaction; wake() after its commit): who took the
        lead and when. How many destinations get it."""
        names = [n for n, d in self.destinations.items() if CRM_LEAD_CLAIMED in d.events]
        when = (at or utc_now()).isoformat(timespec="seconds").replace("+00:00", "Z")
        return await lead_db.enqueue_event(
            session, lead, CRM_LEAD_CLAIMED, names, {"claimed_by": by, "claimed_at": when}
        )

    async def lead_qualified(self, session: AsyncSession, lead: Lead) -> int:
        """Enqueue `lead.qualified` once the user answered the optional questions (when, how long:
        the payload's `qualification`), in the caller's transaction. How many destinations get it."""
        names = [n for n, d in self.destinations.items() if CRM_LEAD_QUALIFIED in d.events]
        answers = {"when": lead.need_when, "for": lead.need_for}
        return await lead_db.enqueue_event(session, lead, CRM_LEAD_QUALIFIED, names, answers)

    def http(self) -> aiohttp.ClientSession:
        if self._http is None or self._http.closed:
            self._http = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=CRM_TIMEOUT_S))
        return self._http

    async def start(self, bot: Bot) -> None:
        log.info("CRM push to %s", ", ".join(self.names))
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._run(bot), name="crm-push")

    async def stop(self) -> None:
        await tasks.cancel(self._task)
        self._task = None
        if self._http is not None:
            await self._http.close()
            self._http = None

    async def _run(self, bot: Bot) -> None:
        first = True
        while True:
            self._wake.clear()
            delay = box.POLL_INTERVAL_S
            try:
                await self.enqueue()
                await self.push_due(all_of_them=first and self.single_process)
                first = False
                await self.alert_admins(bot)
                async with self.sessionmaker() as session:
                    due = await lead_db.crm_next_attempt_at(session, self.names)
                if due is not None:
                    delay = min(max((due - utc_now()).total_seconds(), 0.05), box.POLL_INTERVAL_S)
            except Exception:
                log.exception("CRM push: round failed; retrying later")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), delay)

    async def enqueue(self) -> int:
        """`lead.created` for the fresh leads a destination has not been given; how many."""
        names = [n for n, d in self.destinations.items() if CRM_LEAD_CREATED in d.events]
        since = utc_now() - box.LEAD_FRESH_FOR
        try:
            async with self.sessionmaker() as session, session.begin():
                return await lead_db.enqueue_created(session, names, since=since, limit=box.BATCH)
        except IntegrityError:  # another replica enqueued them first
            return 0

    async def push_due(self, *, all_of_them: bool = False) -> int:
        """Push the due deliveries; how many were taken by their CRM."""
        now = utc_now()
        async with self.sessionmaker() as session:
            ids = await lead_db.due_crm_ids(
                session, self.names, now=now, all_of_them=all_of_them, limit=box.BATCH
            )
        done = 0
        for delivery_id in ids:
            now = utc_now()
            async with self.sessionmaker() as session, session.begin():
                delivery = await lead_db.claim_crm(
                    session, delivery_id, self.names,
                    now=now, until=now + timedelta(seconds=box.CLAIM_S), all_of_them=all_of_them,
                )  # fmt: skip
                if delivery is None:
                    continue
                lead = await session.get(Lead, delivery.lead_id)
                if lead is None:
                    continue
                user = await session.scalar(select(User).where(User.telegram_id == lead.telegram_id))
                body = payload(lead, user, delivery.event, delivery.data, tr=self.tr, lang=self.lang)
                where = self.destinations[delivery.destination]
                key, attempts, created_at = delivery.idempotency_key, delivery.attempts, lead.created_at
                lead_id = lead.id
            try:
                remote_id = await asyncio.wait_for(where.push(self.http(), body, key), CRM_TIMEOUT_S)
            except PUSH_ERRORS as e:
                self.pushes.add(f"{where.name}:failed")
                await self._failed(delivery_id, where.name, lead_id, attempts + 1, created_at, e)
                continue
            self.pushes.add(f"{where.name}:delivered")
            async with self.sessionmaker() as session, session.begin():
                await lead_db.mark_crm_sent(session, delivery_id, now=utc_now(), remote_id=remote_id)
            log.info("lead #%s %s pushed to %s (%s)", lead_id, body["event"], where.name, remote_id or "-")
            done += 1
        return done

    async def _failed(
        self, delivery_id: int, name: str, lead_id: int, attempts: int, created_at: Any, error: Exception
    ) -> None:
        text = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
        now = utc_now()
        retry_at = None
        if not box.fresh(created_at, now):
            log.error("lead #%s not pushed to %s after %d attempts: %s", lead_id, name, attempts, text)
        else:
            wait = box.backoff_s(attempts)
            if isinstance(error, CrmRefused) and error.retry_after is not None:
                wait = max(wait, error.retry_after)
            retry_at = now + timedelta(seconds=wait)
            log.warning(
                "lead #%s not pushed to %s (attempt %d): %s; retrying in %.1f s",
                lead_id, name, attempts, text, wait,
            )  # fmt: skip
        async with self.sessionmaker() as session, session.begin():
            await lead_db.mark_crm_failed(session, delivery_id, error=text, retry_at=retry_at)

    async def alert_admins(self, bot: Bot) -> bool:
        """Tell the admins once that a CRM keeps refusing; whether they were told now."""
        async with self.sessionmaker() as session:
            failing = await lead_db.crm_to_alert(
                session, min_attempts=box.ALERT_AFTER_ATTEMPTS, limit=box.BATCH * 5
            )
        if not failing:
            return False
        async with self.sessionmaker() as session, session.begin():
            known = await lead_db.crm_outage_told(session)
            fresh_news = await lead_db.mark_crm_alerted(session, [d.id for d in failing], now=utc_now())
        told = False
        if fresh_news and not known and self.admin_ids:
            text = self._alert_text(failing)
            for admin in self.admin_ids:
                try:
                    await bot.send_message(admin, text)
                    told = True
                except box.SEND_ERRORS as e:
                    log.warning("admin %s not told of the CRM failing: %s", admin, e)
        log.error("CRM deliveries %s keep failing (admins told: %s)", [d.id for d in failing], told)
        return told

    def _alert_text(self, failing: list[CrmDelivery]) -> str:
        lead_ids = sorted({d.lead_id for d in failing})
        listed = ", ".join(f"#{i}" for i in lead_ids[: box.ALERT_LISTED])
        if len(lead_ids) > box.ALERT_LISTED:
            listed += f" (+{len(lead_ids) - box.ALERT_LISTED})"
        error = lead_texts.clip(failing[-1].last_error or "—", 300)
        return lead_texts.render(
            self.tr,
            "crm-admin-alert",
            crm=", ".join(sorted({d.destination for d in failing})),
            count=len(lead_ids),
            leads=listed,
            error=escape(error, quote=False),
            days=box.LEAD_FRESH_FOR.days,
        )
