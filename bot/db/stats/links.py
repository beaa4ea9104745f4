"""Who came by which link: the users of one link source, the users whose personal link brought others.

Read-only queries, counted over all time.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.db.models import Lead, User


async def users_from(session: AsyncSession, source: str) -> int:
    """How many users first came by the link with this source."""
    return int(await session.scalar(select(func.count()).select_from(User).where(User.source == source)) or 0)


@dataclass(frozen=True)
class Referrer:
    """A user whose personal link (`ref_<id>`) brought others: who, how many, their leads."""

    telegram_id: int
    username: str | None
    users: int
    leads: int


async def top_referrers(session: AsyncSession, limit: int) -> tuple[list[Referrer], int]:
    """The users who brought the most others (ties: the smaller id first), at most `limit`, and how
    many referrers there are in all. Counted over all time (`users.referred_by`)."""
    brought = (
        select(User.referred_by.label("referrer"), func.count().label("users"))
        .where(User.referred_by.is_not(None))
        .group_by(User.referred_by)
        .subquery()
    )
    leads = (
        select(User.referred_by.label("referrer"), func.count(Lead.id).label("leads"))
        .join(Lead, Lead.telegram_id == User.telegram_id)
        .where(User.referred_by.is_not(None))
        .group_by(User.referred_by)
        .subquery()
    )
    referrer = User.__table__.alias("referrer")
    rows = await session.execute(
        select(brought.c.referrer, referrer.c.username, brought.c.users, func.coalesce(leads.c.leads, 0))
        .outerjoin(referrer, referrer.c.telegram_id == brought.c.referrer)
        .outerjoin(leads, leads.c.referrer == brought.c.referrer)
        .order_by(brought.c.users.desc(), brought.c.referrer.asc())
        .limit(limit)
    )
    total = await session.scalar(select(func.count()).select_from(brought))
    found = [Referrer(int(r), name, int(n), int(k)) for r, name, n, k in rows]
    return found, int(total or 0)
