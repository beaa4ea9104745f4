"""Writing a lead: a repeat within DEDUP_WINDOW is the same lead, and past MAX_LEADS_PER_WINDOW a
request joins the user's last card as a note; the card and the user's confirmation are kept with it.
Functions flush, never commit."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import case, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from bot.db.models import LEAD_PENDING, LEAD_SENT, LEAD_UPDATED, DialogSession, Lead, utc_now

DEDUP_WINDOW = timedelta(minutes=10)
"""A second request with the same key within this window is the same lead (a double tap, a repeat)."""
LEAD_WINDOW = timedelta(hours=1)
MAX_LEADS_PER_WINDOW = 3
"""Cards one user makes within LEAD_WINDOW; a later request joins the last card as a note."""
MAX_NOTES = 50
"""Notes kept on one card (a flood's further requests are counted in the log only)."""


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


async def list_leads(session: AsyncSession, telegram_id: int | None = None) -> Sequence[Lead]:
    query = select(Lead).order_by(Lead.id)
    if telegram_id is not None:
        query = query.where(Lead.telegram_id == telegram_id)
    return list(await session.scalars(query))
