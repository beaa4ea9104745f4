"""Database access for leads (quote requests) and their outbox state. Functions flush, never commit,
except where a function takes a sessionmaker (the outbox's own short transactions)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import case, func, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from bot.db.models import (
    CRM_FAILED,
    CRM_LEAD_CREATED,
    CRM_PENDING,
    CRM_SENT,
    LEAD_FAILED,
    LEAD_PENDING,
    LEAD_SENT,
    LEAD_UPDATED,
    CrmDelivery,
    DialogSession,
    Lead,
    utc_now,
)

DEDUP_WINDOW = timedelta(minutes=10)
"""A second request with the same key within this window is the same lead (a double tap, a repeat)."""
LEAD_WINDOW = timedelta(hours=1)
MAX_LEADS_PER_WINDOW = 3
"""Cards one user makes within LEAD_WINDOW; a later request joins the last card as a note."""
MAX_NOTES = 50
"""Notes kept on one card (a flood's further requests are counted in the log only)."""
UNDELIVERED = (LEAD_PENDING, LEAD_UPDATED)
"""What the outbox still has to deliver: a card to send, or a sent card to edit."""


async def find_duplicate(
    session: AsyncSession, dedup_key: str, *, now: datetime | None = None
) -> Lead | None:
    """The lead with this key written within DEDUP_WINDOW, if any."""
    now = now or utc_now()
    return await session.scalar(
        select(Lead)
        .where(Lead.dedup_key == dedup_key, Lead.created_at >= now - DEDUP_WINDOW)
        .order_by(Lead.id.desc())
        .limit(1)
    )


async def recent_leads(session: AsyncSession, telegram_id: int, *, now: datetime | None = None) -> list[Lead]:
    """The user's leads (cards) written within LEAD_WINDOW, oldest first."""
    since = (now or utc_now()) - LEAD_WINDOW
    rows = await session.scalars(
        select(Lead).where(Lead.telegram_id == telegram_id, Lead.created_at >= since).order_by(Lead.id)
    )
    return list(rows)


async def add_note(session: AsyncSession, lead: Lead, note: str) -> bool:
    """A follow-up joins the lead's card: a sent card is edited (updated, due now), an unsent one goes
    with it. False when the card has MAX_NOTES already."""
    notes = list(lead.notes or [])
    if len(notes) >= MAX_NOTES:
        return False
    notes.append(note)
    sent = Lead.delivery_status == LEAD_SENT
    await session.execute(
        update(Lead)
        .where(Lead.id == lead.id)
        .values(
            notes=notes,
            revision=Lead.revision + 1,
            delivery_status=case((sent, LEAD_UPDATED), else_=Lead.delivery_status),
            next_attempt_at=case((sent, None), else_=Lead.next_attempt_at),
        )
        .execution_options(synchronize_session=False)
    )
    await session.refresh(lead)
    return True


async def create_lead(
    session: AsyncSession,
    *,
    telegram_id: int,
    contact_kind: str,
    contact: str,
    comment: str | None,
    source: str | None,
    dialog_id: int | None,
    request: dict[str, Any] | None,
    summary: dict[str, Any],
    dedup_key: str,
    now: datetime | None = None,
) -> tuple[Lead, bool]:
    """The new lead, pending delivery, and True; or the lead with the same key written within
    DEDUP_WINDOW, and False."""
    now = now or utc_now()
    existing = await find_duplicate(session, dedup_key, now=now)
    if existing is not None:
        return existing, False
    if dialog_id is not None and await session.get(DialogSession, dialog_id) is None:
        dialog_id = None  # rolled back, or from another database: the lead stands without it
    lead = Lead(
        telegram_id=telegram_id,
        created_at=now,
        contact_kind=contact_kind,
        contact=contact,
        comment=comment,
        source=source,
        dialog_id=dialog_id,
        request=dict(request or {}),
        summary=dict(summary),
        dedup_key=dedup_key,
        delivery_status=LEAD_PENDING,
        attempts=0,
    )
    session.add(lead)
    await session.flush()
    return lead, True


async def set_card(session: AsyncSession, lead: Lead, card: str, *, accepted: str | None = None) -> None:
    """Keep the rendered card in the summary (the outbox sends it as written), and the user's
    confirmation once it is delivered (the outbox edits it in)."""
    lead.summary = {**lead.summary, "card": card, "accepted": accepted}
    await session.flush()


async def mark_quote_requested(session: AsyncSession, dialog_id: int | None) -> None:
    if dialog_id is None:
        return
    await session.execute(
        update(DialogSession).where(DialogSession.id == dialog_id).values(quote_requested=True)
    )


async def set_confirmation(session: AsyncSession, lead_id: int, message_id: int) -> None:
    """The user's confirmation message, edited to "accepted" once the card is delivered."""
    await session.execute(update(Lead).where(Lead.id == lead_id).values(confirm_message_id=message_id))


def _due(now: datetime, all_of_them: bool) -> list[Any]:
    condition: list[Any] = [Lead.delivery_status.in_(UNDELIVERED)]
    if not all_of_them:
        condition.append(or_(Lead.next_attempt_at.is_(None), Lead.next_attempt_at <= now))
    return condition


async def due_lead_ids(session: AsyncSession, *, now: datetime, all_of_them: bool, limit: int) -> list[int]:
    """Undelivered leads whose next attempt is due (all of them: the only sender starting), oldest first."""
    rows = await session.scalars(
        select(Lead.id).where(*_due(now, all_of_them)).order_by(Lead.id).limit(limit)
    )
    return list(rows)


async def claim_lead(
    session: AsyncSession, lead_id: int, *, now: datetime, until: datetime, all_of_them: bool
) -> Lead | None:
    """Take a due lead for sending until ``until`` (another sender leaves it meanwhile); None when it is
    no longer due (sent, or taken by another replica)."""
    result = await session.execute(
        update(Lead).where(Lead.id == lead_id, *_due(now, all_of_them)).values(next_attempt_at=until)
    )
    if not result.rowcount:  # type: ignore[attr-defined]
        return None
    return await session.get(Lead, lead_id)


async def mark_sent(
    session: AsyncSession, lead_id: int, *, now: datetime, message_id: int | None, revision: int
) -> None:
    """The card of ``revision`` is in the sales chat as ``message_id``: sent, or updated (due again)
    when a note joined it meanwhile."""
    values: dict[str, Any] = {
        "sent_at": now,
        "attempts": Lead.attempts + 1,
        "next_attempt_at": None,
        "last_error": None,
    }
    if message_id is not None:
        values["card_message_id"] = message_id
    result = await session.execute(
        update(Lead)
        .where(Lead.id == lead_id, Lead.revision == revision)
        .values(delivery_status=LEAD_SENT, **values)
    )
    if not result.rowcount:  # type: ignore[attr-defined]
        await session.execute(
            update(Lead).where(Lead.id == lead_id).values(delivery_status=LEAD_UPDATED, **values)
        )


async def mark_attempt_failed(
    session: AsyncSession, lead_id: int, *, error: str, retry_at: datetime | None
) -> None:
    """One more failed attempt: retried at ``retry_at``, or failed for good (None: no longer fresh)."""
    lead = await session.get(Lead, lead_id)
    if lead is None:
        return
    lead.attempts += 1
    lead.last_error = error[:1000]
    lead.next_attempt_at = retry_at
    if retry_at is None:
        lead.delivery_status = LEAD_FAILED
    await session.flush()


async def to_alert(session: AsyncSession, *, min_attempts: int, limit: int) -> list[Lead]:
    """Undelivered leads that failed ``min_attempts`` times and the admins were not told of. (A card
    edited since it was sent, a claim or a note, counts its deliveries among its attempts: only a
    lead whose last attempt failed is one to tell of, not one waiting for its edit.)"""
    rows = await session.scalars(
        select(Lead)
        .where(
            Lead.delivery_status.in_(UNDELIVERED),
            Lead.attempts >= min_attempts,
            Lead.last_error.is_not(None),
            Lead.alerted_at.is_(None),
        )
        .order_by(Lead.id)
        .limit(limit)
    )
    return list(rows)


async def mark_alerted(session: AsyncSession, lead_ids: Sequence[int], *, now: datetime) -> int:
    """Mark the leads the admins are told of; how many were not yet (another replica may have)."""
    result = await session.execute(
        update(Lead).where(Lead.id.in_(lead_ids), Lead.alerted_at.is_(None)).values(alerted_at=now)
    )
    return int(result.rowcount or 0)  # type: ignore[attr-defined]


async def to_tell(session: AsyncSession, *, limit: int) -> list[Lead]:
    """Delivered leads whose user still reads "saved"."""
    rows = await session.scalars(
        select(Lead)
        .where(
            Lead.sent_at.is_not(None),
            Lead.confirm_message_id.is_not(None),
            Lead.user_told_at.is_(None),
        )
        .order_by(Lead.id)
        .limit(limit)
    )
    return list(rows)


async def mark_told(session: AsyncSession, lead_id: int, *, now: datetime | None) -> bool:
    """Take the user's "accepted" edit (``now``), or give it back (None); whether it was taken here."""
    told = Lead.user_told_at.is_(None) if now is not None else Lead.user_told_at.is_not(None)
    result = await session.execute(update(Lead).where(Lead.id == lead_id, told).values(user_told_at=now))
    return bool(result.rowcount)  # type: ignore[attr-defined]


async def undelivered(session: AsyncSession, *, limit: int) -> tuple[int, list[Lead]]:
    """How many leads are not delivered (pending, updated or failed), and the oldest ``limit``."""
    condition = Lead.delivery_status.in_((*UNDELIVERED, LEAD_FAILED))
    count = await session.scalar(select(func.count()).select_from(Lead).where(condition))
    rows = await session.scalars(select(Lead).where(condition).order_by(Lead.id).limit(limit))
    return int(count or 0), list(rows)


async def resend(session: AsyncSession) -> int:
    """Every undelivered lead, failed ones too, due now; how many."""
    result = await session.execute(
        update(Lead)
        .where(Lead.delivery_status.in_((*UNDELIVERED, LEAD_FAILED)))
        .values(
            delivery_status=case(
                (Lead.delivery_status == LEAD_FAILED, LEAD_PENDING), else_=Lead.delivery_status
            ),
            next_attempt_at=None,
        )
    )
    return int(result.rowcount or 0)  # type: ignore[attr-defined]


async def next_attempt_at(session: AsyncSession) -> datetime | None:
    """When the earliest undelivered lead is due (None: nothing to deliver)."""
    pending = await session.execute(
        select(func.count(), func.min(Lead.next_attempt_at)).where(Lead.delivery_status.in_(UNDELIVERED))
    )
    count, earliest = pending.one()
    if not count:
        return None
    has_new = await session.scalar(
        select(Lead.id).where(Lead.delivery_status.in_(UNDELIVERED), Lead.next_attempt_at.is_(None)).limit(1)
    )
    if has_new is not None or earliest is None:
        return utc_now()
    # func.min bypasses the column type: SQLite hands back a naive datetime or a string.
    if isinstance(earliest, str):
        earliest = datetime.fromisoformat(earliest)
    return earliest if earliest.tzinfo else earliest.replace(tzinfo=utc_now().tzinfo)


async def list_leads(session: AsyncSession, telegram_id: int | None = None) -> Sequence[Lead]:
    query = select(Lead).order_by(Lead.id)
    if telegram_id is not None:
        query = query.where(Lead.telegram_id == telegram_id)
    return list(await session.scalars(query))


# ---------------------------------------------------------------- CRM deliveries (bot.crm)


async def enqueue_created(
    session: AsyncSession, destinations: Sequence[str], *, since: datetime, limit: int
) -> int:
    """A `lead.created` delivery to each destination for the leads written since ``since`` that have
    none yet; how many. Two replicas may race: the unique (lead, destination, event) refuses the
    second (IntegrityError, the caller's transaction rolls back)."""
    added = 0
    for destination in destinations:
        has = (
            select(CrmDelivery.id)
            .where(
                CrmDelivery.lead_id == Lead.id,
                CrmDelivery.destination == destination,
                CrmDelivery.event == CRM_LEAD_CREATED,
            )
            .exists()
        )
        rows = await session.scalars(
            select(Lead).where(Lead.created_at >= since, ~has).order_by(Lead.id).limit(limit)
        )
        for lead in rows:
            session.add(_delivery(lead, destination, CRM_LEAD_CREATED, {}))
            added += 1
    await session.flush()
    return added


async def enqueue_event(
    session: AsyncSession, lead: Lead, event: str, destinations: Sequence[str], data: dict[str, Any]
) -> int:
    """One delivery of ``event`` (with ``data``) to each destination not given it yet; how many."""
    given = set(
        await session.scalars(
            select(CrmDelivery.destination).where(CrmDelivery.lead_id == lead.id, CrmDelivery.event == event)
        )
    )
    added = [_delivery(lead, d, event, data) for d in destinations if d not in given]
    session.add_all(added)
    await session.flush()
    return len(added)


def _delivery(lead: Lead, destination: str, event: str, data: dict[str, Any]) -> CrmDelivery:
    from bot.crm import idempotency_key

    return CrmDelivery(
        lead_id=lead.id,
        destination=destination,
        event=event,
        idempotency_key=idempotency_key(lead, event),
        data=dict(data),
        created_at=utc_now(),
        status=CRM_PENDING,
        attempts=0,
    )


def _crm_due(now: datetime, all_of_them: bool, destinations: Sequence[str]) -> list[Any]:
    condition: list[Any] = [CrmDelivery.status == CRM_PENDING, CrmDelivery.destination.in_(destinations)]
    if not all_of_them:
        condition.append(or_(CrmDelivery.next_attempt_at.is_(None), CrmDelivery.next_attempt_at <= now))
    return condition


async def due_crm_ids(
    session: AsyncSession, destinations: Sequence[str], *, now: datetime, all_of_them: bool, limit: int
) -> list[int]:
    """Pending deliveries to the configured destinations whose next attempt is due, oldest first (a
    destination no longer configured keeps its deliveries pending until it is set again)."""
    due = _crm_due(now, all_of_them, destinations)
    rows = await session.scalars(select(CrmDelivery.id).where(*due).order_by(CrmDelivery.id).limit(limit))
    return list(rows)


async def claim_crm(
    session: AsyncSession,
    delivery_id: int,
    destinations: Sequence[str],
    *,
    now: datetime,
    until: datetime,
    all_of_them: bool,
) -> CrmDelivery | None:
    """Take a due CRM delivery until ``until`` (as `claim_lead`); None when no longer due."""
    result = await session.execute(
        update(CrmDelivery)
        .where(CrmDelivery.id == delivery_id, *_crm_due(now, all_of_them, destinations))
        .values(next_attempt_at=until)
    )
    if not result.rowcount:  # type: ignore[attr-defined]
        return None
    return await session.get(CrmDelivery, delivery_id)


async def mark_crm_sent(
    session: AsyncSession, delivery_id: int, *, now: datetime, remote_id: str | None
) -> None:
    await session.execute(
        update(CrmDelivery)
        .where(CrmDelivery.id == delivery_id)
        .values(
            status=CRM_SENT,
            sent_at=now,
            attempts=CrmDelivery.attempts + 1,
            next_attempt_at=None,
            last_error=None,
            remote_id=remote_id[:64] if remote_id else None,
        )
    )


async def mark_crm_failed(
    session: AsyncSession, delivery_id: int, *, error: str, retry_at: datetime | None
) -> None:
    """One more failed attempt: retried at ``retry_at``, or failed for good (None)."""
    values: dict[str, Any] = {
        "attempts": CrmDelivery.attempts + 1,
        "last_error": error[:1000],
        "next_attempt_at": retry_at,
    }
    if retry_at is None:
        values["status"] = CRM_FAILED
    await session.execute(update(CrmDelivery).where(CrmDelivery.id == delivery_id).values(**values))


async def crm_to_alert(session: AsyncSession, *, min_attempts: int, limit: int) -> list[CrmDelivery]:
    """Pending CRM deliveries that failed ``min_attempts`` times and the admins were not told of."""
    rows = await session.scalars(
        select(CrmDelivery)
        .where(
            CrmDelivery.status == CRM_PENDING,
            CrmDelivery.attempts >= min_attempts,
            CrmDelivery.alerted_at.is_(None),
        )
        .order_by(CrmDelivery.id)
        .limit(limit)
    )
    return list(rows)


# ---------------------------------------------------------------- claims and qualification


def _card_changed(**values: Any) -> dict[str, Any]:
    """Values that change what a card shows: a sent card is edited (updated, due now), an unsent one
    goes out as it is then."""
    sent = Lead.delivery_status == LEAD_SENT
    return {
        **values,
        "revision": Lead.revision + 1,
        "delivery_status": case((sent, LEAD_UPDATED), else_=Lead.delivery_status),
        "next_attempt_at": case((sent, None), else_=Lead.next_attempt_at),
    }


async def claim(
    session: AsyncSession, lead_id: int, *, manager_id: int, manager_name: str, now: datetime
) -> tuple[bool, Lead | None]:
    """The manager takes the lead if nobody has: one conditional UPDATE, so of two presses at once
    exactly one wins. (True, the lead) for the winner; (False, the lead as claimed) otherwise;
    (False, None) when there is no such lead."""
    result = await session.execute(
        update(Lead)
        .where(Lead.id == lead_id, Lead.claimed_by.is_(None))
        .values(**_card_changed(claimed_by=manager_id, claimed_by_name=manager_name[:128], claimed_at=now))
        .execution_options(synchronize_session=False)
    )
    lead = await session.get(Lead, lead_id, populate_existing=True)
    return bool(result.rowcount), lead  # type: ignore[attr-defined]


async def set_need(session: AsyncSession, lead_id: int, telegram_id: int, **answers: str | None) -> bool:
    """The user's qualification answers (need_when / need_for) on their lead; its card is edited.
    False when the lead is not theirs."""
    result = await session.execute(
        update(Lead)
        .where(Lead.id == lead_id, Lead.telegram_id == telegram_id)
        .values(**_card_changed(**answers))
        .execution_options(synchronize_session=False)
    )
    return bool(result.rowcount)  # type: ignore[attr-defined]


def _unclaimed(field: Any, due_before: datetime) -> list[Any]:
    return [
        Lead.claimed_by.is_(None),
        Lead.card_message_id.is_not(None),
        field.is_(None),
        Lead.created_at <= due_before,
    ]


async def to_remind(session: AsyncSession, *, due_before: datetime, limit: int) -> list[Lead]:
    """Delivered, unclaimed leads written before ``due_before`` the sales chat was not reminded of."""
    rows = await session.scalars(
        select(Lead).where(*_unclaimed(Lead.reminded_at, due_before)).order_by(Lead.id).limit(limit)
    )
    return list(rows)


async def crm_outage_told(session: AsyncSession) -> bool:
    """Whether the admins were told of a CRM delivery still pending: the outage they know of goes on
    (after a restart too, on any replica)."""
    told = await session.scalar(
        select(CrmDelivery.id)
        .where(CrmDelivery.status == CRM_PENDING, CrmDelivery.alerted_at.is_not(None))
        .limit(1)
    )
    return told is not None


async def mark_crm_alerted(session: AsyncSession, delivery_ids: Sequence[int], *, now: datetime) -> int:
    result = await session.execute(
        update(CrmDelivery)
        .where(CrmDelivery.id.in_(delivery_ids), CrmDelivery.alerted_at.is_(None))
        .values(alerted_at=now)
    )
    return int(result.rowcount or 0)  # type: ignore[attr-defined]


async def crm_next_attempt_at(session: AsyncSession, destinations: Sequence[str]) -> datetime | None:
    """When the earliest pending CRM delivery is due (None: nothing pending)."""
    pending_to = (CrmDelivery.status == CRM_PENDING, CrmDelivery.destination.in_(destinations))
    pending = await session.execute(
        select(func.count(), func.min(CrmDelivery.next_attempt_at)).where(*pending_to)
    )
    count, earliest = pending.one()
    if not count:
        return None
    has_new = await session.scalar(
        select(CrmDelivery.id).where(*pending_to, CrmDelivery.next_attempt_at.is_(None)).limit(1)
    )
    if has_new is not None or earliest is None:
        return utc_now()
    if isinstance(earliest, str):
        earliest = datetime.fromisoformat(earliest)
    return earliest if earliest.tzinfo else earliest.replace(tzinfo=utc_now().tzinfo)


async def crm_deliveries(session: AsyncSession, lead_id: int | None = None) -> list[CrmDelivery]:
    query = select(CrmDelivery).order_by(CrmDelivery.id)
    if lead_id is not None:
        query = query.where(CrmDelivery.lead_id == lead_id)
    return list(await session.scalars(query))


async def to_escalate(session: AsyncSession, *, due_before: datetime, limit: int) -> list[Lead]:
    """Delivered, unclaimed leads written before ``due_before`` the admins were not told of."""
    rows = await session.scalars(
        select(Lead).where(*_unclaimed(Lead.escalated_at, due_before)).order_by(Lead.id).limit(limit)
    )
    return list(rows)


async def mark_reminded(session: AsyncSession, lead_id: int, *, now: datetime | None) -> bool:
    """Take the lead's reminder (``now``) while it is still unclaimed, or give it back (None)."""
    if now is None:
        result = await session.execute(update(Lead).where(Lead.id == lead_id).values(reminded_at=None))
    else:
        result = await session.execute(
            update(Lead)
            .where(Lead.id == lead_id, Lead.reminded_at.is_(None), Lead.claimed_by.is_(None))
            .values(reminded_at=now)
        )
    return bool(result.rowcount)  # type: ignore[attr-defined]


async def mark_escalated(session: AsyncSession, lead_ids: Sequence[int], *, now: datetime) -> list[int]:
    """Take the escalation of those leads still unclaimed and not escalated; the ids taken here."""
    result = await session.execute(
        update(Lead)
        .where(Lead.id.in_(lead_ids), Lead.escalated_at.is_(None), Lead.claimed_by.is_(None))
        .values(escalated_at=now)
        .returning(Lead.id)
    )
    return sorted(result.scalars())


async def earliest_unclaimed(session: AsyncSession) -> tuple[datetime | None, datetime | None]:
    """The oldest delivered unclaimed lead not reminded of, and not escalated: when each was written."""
    out: list[datetime | None] = []
    for field in (Lead.reminded_at, Lead.escalated_at):
        value = await session.scalar(
            select(func.min(Lead.created_at)).where(
                Lead.claimed_by.is_(None), Lead.card_message_id.is_not(None), field.is_(None)
            )
        )
        if isinstance(value, str):  # func.min bypasses the column type on SQLite
            value = datetime.fromisoformat(value)
        if value is not None and value.tzinfo is None:
            value = value.replace(tzinfo=utc_now().tzinfo)
        out.append(value)
    return out[0], out[1]
