"""Database access for leads (quote requests) and their outbox state. Functions flush, never commit,
except where a function takes a sessionmaker (the outbox's own short transactions)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import func, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from bot.db.models import LEAD_FAILED, LEAD_PENDING, LEAD_SENT, DialogSession, Lead, utc_now

DEDUP_WINDOW = timedelta(minutes=10)
"""A second request with the same key within this window is the same lead (a double tap, a repeat)."""


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
    existing = await session.scalar(
        select(Lead)
        .where(Lead.dedup_key == dedup_key, Lead.created_at >= now - DEDUP_WINDOW)
        .order_by(Lead.id.desc())
        .limit(1)
    )
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


async def set_card(session: AsyncSession, lead: Lead, card: str) -> None:
    """Keep the rendered card in the summary (the outbox sends it as written)."""
    lead.summary = {**lead.summary, "card": card}
    await session.flush()


async def mark_quote_requested(session: AsyncSession, dialog_id: int | None) -> None:
    if dialog_id is None:
        return
    await session.execute(
        update(DialogSession).where(DialogSession.id == dialog_id).values(quote_requested=True)
    )


def _due(now: datetime, all_of_them: bool) -> list[Any]:
    condition: list[Any] = [Lead.delivery_status == LEAD_PENDING]
    if not all_of_them:
        condition.append(or_(Lead.next_attempt_at.is_(None), Lead.next_attempt_at <= now))
    return condition


async def due_lead_ids(session: AsyncSession, *, now: datetime, all_of_them: bool, limit: int) -> list[int]:
    """Pending leads whose next attempt is due (all pending ones: the only sender starting), oldest first."""
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


async def mark_sent(session: AsyncSession, lead_id: int, *, now: datetime) -> None:
    await session.execute(
        update(Lead)
        .where(Lead.id == lead_id)
        .values(
            delivery_status=LEAD_SENT,
            sent_at=now,
            attempts=Lead.attempts + 1,
            next_attempt_at=None,
            last_error=None,
        )
    )


async def mark_attempt_failed(
    session: AsyncSession, lead_id: int, *, error: str, retry_at: datetime | None
) -> None:
    """One more failed attempt: retried at ``retry_at``, or failed for good (None)."""
    await session.execute(
        update(Lead)
        .where(Lead.id == lead_id)
        .values(
            attempts=Lead.attempts + 1,
            last_error=error[:1000],
            next_attempt_at=retry_at,
            delivery_status=LEAD_PENDING if retry_at is not None else LEAD_FAILED,
        )
    )


async def next_attempt_at(session: AsyncSession) -> datetime | None:
    """When the earliest pending lead is due (None: nothing pending)."""
    pending = await session.execute(
        select(func.count(), func.min(Lead.next_attempt_at)).where(Lead.delivery_status == LEAD_PENDING)
    )
    count, earliest = pending.one()
    if not count:
        return None
    has_new = await session.scalar(
        select(Lead.id).where(Lead.delivery_status == LEAD_PENDING, Lead.next_attempt_at.is_(None)).limit(1)
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
