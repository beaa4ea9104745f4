"""The rows /export writes: users.csv, dialogs.csv, leads.csv, and their columns.

Read-only queries; each ``*_COLUMNS`` tuple names, in order, the fields of the rows its query yields.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.db.models import DialogSession, Lead, User
from bot.db.stats.sales_funnel import lead_task

USER_COLUMNS = (
    "telegram_id",
    "username",
    "first_name",
    "language",
    "telegram_language",
    "source",
    "created_at",
    "last_seen_at",
    "referred_by",
    "currency",
)
"""users.csv: one row per user; ``language`` is the one picked with /lang (empty: Telegram's is used),
``source`` the link source they first came by, ``referred_by`` the Telegram id of the user whose
personal link (``ref_<id>``) brought them, ``currency`` the one picked with /currency; times in UTC."""
DIALOG_COLUMNS = (
    "id",
    "telegram_id",
    "user_source",
    "source",
    "task",
    "status",
    "model",
    "recommendation",
    "price_per_hour",
    "currency",
    "verdict",
    "offer_id",
    "created_at",
    "completed_at",
)
"""dialogs.csv: one row per dialog; ``user_source`` is the user's first link source, ``source`` the
link this dialog started from; status started | completed | abandoned; the rest is the answer's."""
LEAD_COLUMNS = (
    "id",
    "telegram_id",
    "username",
    "created_at",
    "source",
    "contact_kind",
    "contact",
    "comment",
    "dialog_id",
    "task",
    "model",
    "precision",
    "recommendation",
    "offer_id",
    "price_per_hour",
    "currency",
    "price",
    "total_bytes",
    "verdict",
    "delivery_status",
    "attempts",
    "last_error",
    "sent_at",
    "claimed_by",
    "claimed_by_name",
    "claimed_at",
    "minutes_to_claim",
    "need_when",
    "need_for",
)
"""leads.csv: one row per lead; ``source`` is the user's first link source, contact_kind username | phone |
email; the configuration of the answer the lead came with (empty for one made before any answer):
``recommendation`` as `<cards>x <gpu id>`, ``offer_id`` the recommended offer, ``price`` as the user saw
it; delivery_status pending | sent | failed (the card to the sales chat), after ``attempts`` tries;
``claimed_by`` the Telegram id of the manager who pressed "Беру" first (``claimed_by_name`` as the card
showed it) at ``claimed_at``, ``minutes_to_claim`` from the lead; ``need_when`` today | week | later and
``need_for`` hours | weeks | months, the user's optional answers (empty: skipped)."""


def _summary_value(summary: dict[str, Any] | None, *keys: str) -> Any:
    for key in keys:
        value = (summary or {}).get(key)
        if value is not None and value != "":
            return value
    return None


async def user_rows(session: AsyncSession) -> Iterator[tuple[Any, ...]]:
    rows = await session.execute(
        select(
            User.telegram_id,
            User.username,
            User.first_name,
            User.language,
            User.language_from_telegram,
            User.source,
            User.created_at,
            User.last_seen_at,
            User.referred_by,
            User.currency,
        ).order_by(User.id)
    )
    return (tuple(row) for row in rows)


async def dialog_rows(session: AsyncSession) -> Iterator[tuple[Any, ...]]:
    rows = await session.execute(
        select(DialogSession, User.telegram_id, User.source)
        .join(User, User.id == DialogSession.user_id)
        .order_by(DialogSession.id)
    )

    def row(d: DialogSession, telegram_id: int, user_source: str | None) -> tuple[Any, ...]:
        s = d.result_summary or {}
        return (
            d.id,
            telegram_id,
            user_source,
            d.source,
            d.task,
            d.status,
            s.get("model"),
            s.get("recommendation"),
            s.get("price_per_hour"),
            s.get("currency"),
            d.verdict,
            d.offer_id,
            d.created_at,
            d.completed_at,
        )

    return (row(*r) for r in rows)


def _minutes_to_claim(lead: Lead) -> float | None:
    if lead.claimed_at is None:
        return None
    return round((lead.claimed_at - lead.created_at).total_seconds() / 60, 1)


async def lead_rows(session: AsyncSession) -> Iterator[tuple[Any, ...]]:
    rows = await session.execute(
        select(Lead, User.username, DialogSession.task, DialogSession.result_summary)
        .outerjoin(User, User.telegram_id == Lead.telegram_id)
        .outerjoin(DialogSession, DialogSession.id == Lead.dialog_id)
        .order_by(Lead.id)
    )

    def row(
        lead: Lead, username: str | None, task: str | None, dialog: dict[str, Any] | None
    ) -> tuple[Any, ...]:
        s = lead.summary or {}
        return (
            lead.id,
            lead.telegram_id,
            username,
            lead.created_at,
            lead.source,
            lead.contact_kind,
            lead.contact,
            lead.comment,
            lead.dialog_id,
            lead_task(s, lead.request, task),
            _summary_value(s, "model") or _summary_value(dialog, "model"),
            _summary_value(s, "precision"),
            _summary_value(s, "recommended_config") or _summary_value(dialog, "recommendation"),
            _summary_value(s, "recommended_offer_id"),
            _summary_value(s, "price_per_hour"),
            _summary_value(s, "currency"),
            _summary_value(s, "price_text"),
            _summary_value(s, "total_bytes") or _summary_value(dialog, "total_bytes"),
            _summary_value(s, "verdict"),
            lead.delivery_status,
            lead.attempts,
            lead.last_error,
            lead.sent_at,
            lead.claimed_by,
            lead.claimed_by_name,
            lead.claimed_at,
            _minutes_to_claim(lead),
            lead.need_when,
            lead.need_for,
        )

    return (row(*r) for r in rows)
