"""The sales-chat outbox's state in the lead rows (bot.outbox delivers): which cards are due, taken,
sent or failed, which the admins were told of, whose users still read "saved". Functions flush, never
commit."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import case, func, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from bot.db.models import LEAD_FAILED, LEAD_PENDING, LEAD_SENT, LEAD_UPDATED, Lead, utc_now

UNDELIVERED = (LEAD_PENDING, LEAD_UPDATED)
"""What the outbox still has to deliver: a card to send, or a sent card to edit."""


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
