"""The CRM delivery queue (bot.crm pushes it): one row per lead, destination and event, taken, sent
or failed as the sales chat's cards are, and the outage the admins were told of. Functions flush,
never commit."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import func, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from bot.db.models import CRM_FAILED, CRM_LEAD_CREATED, CRM_PENDING, CRM_SENT, CrmDelivery, Lead, utc_now


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
