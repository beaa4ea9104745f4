"""Claims and qualification on a lead's card: "Беру" (the first press wins), the user's answers,
and the delivered leads nobody claimed, of which the sales chat is reminded and the admins are told
(escalation). Functions flush, never commit."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import case, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from bot.db.models import LEAD_SENT, LEAD_UPDATED, Lead, utc_now


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
