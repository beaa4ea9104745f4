"""The sales figures: the funnel per link source, task and recommended GPU; the rows for /export.

Read-only queries (the admin commands in ``bot.handlers.admin`` and ``python -m bot stats`` share them).
Attribution: everything counts towards the link source that first brought the user (``users.source``;
a lead keeps it in ``leads.source``), which is what a sales link is credited with. In a period,
users count by when they first came, dialogs started by when they started, completed ones by when
they completed, leads by when they were made. Conversion is leads ÷ completed dialogs. A lead is
claimed when a manager pressed "Беру" on its card; the time to claim runs from the lead to that press.
Weeks are ISO weeks (Monday to Sunday, UTC), the last WEEKS_SHOWN of them.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.db.models import (
    DIALOG_COMPLETED,
    LEAD_FAILED,
    LEAD_PENDING,
    DialogSession,
    Lead,
    User,
    utc_now,
)

PERIODS: dict[str, timedelta | None] = {"7d": timedelta(days=7), "30d": timedelta(days=30), "all": None}
"""The periods /stats reports, newest first: the last 7 days, the last 30 days, all time."""
WEEKS_SHOWN = 8
"""The weeks /stats lists, this one included."""
# "2x RTX 4090 48GB" (a dialog's result summary) -> "RTX 4090 48GB".
_CARD_COUNT = re.compile(r"^\s*\d+\s*[x×]\s*")


@dataclass(frozen=True)
class Counts:
    """One row of the funnel. ``pending``: leads whose card has not reached the sales chat yet;
    ``failed``: leads given up after the retries (both are in ``leads``)."""

    users: int = 0
    started: int = 0
    completed: int = 0
    leads: int = 0
    pending: int = 0
    failed: int = 0
    claimed: int = 0
    claim_seconds: tuple[float, ...] = ()  # each claimed lead's time to claim

    @property
    def conversion(self) -> float | None:
        """Leads per completed dialog (None without completed dialogs)."""
        return self.leads / self.completed if self.completed else None

    @property
    def median_claim_s(self) -> float | None:
        """The median time from a lead to its claim, in seconds (None: none claimed)."""
        return statistics.median(self.claim_seconds) if self.claim_seconds else None

    def __add__(self, other: Counts) -> Counts:
        return Counts(
            self.users + other.users,
            self.started + other.started,
            self.completed + other.completed,
            self.leads + other.leads,
            self.pending + other.pending,
            self.failed + other.failed,
            self.claimed + other.claimed,
            self.claim_seconds + other.claim_seconds,
        )


@dataclass
class Funnel:
    """The figures of one period: totals and the same counts per source / task / recommended GPU.

    Keys: the link source (None: came without a link), the task (None: a lead made before any
    answer), the recommended GPU's name (None: nothing recommended, or no answer).
    """

    since: datetime | None
    total: Counts = field(default_factory=Counts)
    by_source: dict[str | None, Counts] = field(default_factory=dict)
    by_task: dict[str | None, Counts] = field(default_factory=dict)
    by_gpu: dict[str | None, Counts] = field(default_factory=dict)

    def add(
        self,
        *,
        source: str | None,
        task: str | None,
        gpu: str | None,
        counts: Counts,
        task_too: bool = True,
        gpu_too: bool = True,
    ) -> None:
        self.total += counts
        _add(self.by_source, source, counts)
        if task_too:
            _add(self.by_task, task, counts)
        if gpu_too:
            _add(self.by_gpu, gpu, counts)


def _add(table: dict[str | None, Counts], key: str | None, counts: Counts) -> None:
    table[key] = table.get(key, Counts()) + counts


def ranked(table: dict[str | None, Counts]) -> list[tuple[str | None, Counts]]:
    """Rows by weight (users, completed dialogs, leads, started, most first), then by name; None last."""
    return sorted(
        table.items(),
        key=lambda kv: (
            -kv[1].users,
            -kv[1].completed,
            -kv[1].leads,
            -kv[1].started,
            kv[0] is None,
            kv[0] or "",
        ),
    )


def gpu_of(recommendation: Any) -> str | None:
    """The GPU of a recommended configuration ("2x RTX 4090 48GB" -> "RTX 4090 48GB")."""
    if not isinstance(recommendation, str) or not recommendation.strip():
        return None
    return _CARD_COUNT.sub("", recommendation).strip() or None


def lead_gpu(summary: dict[str, Any] | None, dialog_summary: dict[str, Any] | None) -> str | None:
    """The GPU recommended in the answer a lead came with (`bot.leads.summary`), else in its dialog's."""
    return gpu_of((summary or {}).get("recommended_config")) or gpu_of(
        (dialog_summary or {}).get("recommendation")
    )


def lead_task(
    summary: dict[str, Any] | None, request: dict[str, Any] | None, dialog_task: str | None
) -> str | None:
    for value in (dialog_task, (summary or {}).get("task"), (request or {}).get("task")):
        if isinstance(value, str) and value:
            return value
    return None


async def funnel(session: AsyncSession, since: datetime | None = None) -> Funnel:
    """The funnel of what happened since ``since`` (None: all time)."""
    result = Funnel(since)

    users = select(User.source, func.count()).group_by(User.source)
    if since is not None:
        users = users.where(User.created_at >= since)
    for source, n in await session.execute(users):
        result.add(
            source=source, task=None, gpu=None, counts=Counts(users=int(n)), task_too=False, gpu_too=False
        )

    started = (
        select(User.source, DialogSession.task, func.count())
        .join(User, User.id == DialogSession.user_id)
        .group_by(User.source, DialogSession.task)
    )
    if since is not None:
        started = started.where(DialogSession.created_at >= since)
    for source, task, n in await session.execute(started):
        result.add(source=source, task=task, gpu=None, counts=Counts(started=int(n)), gpu_too=False)

    recommendation = DialogSession.result_summary["recommendation"].as_string()
    completed = (
        select(User.source, DialogSession.task, recommendation, func.count())
        .join(User, User.id == DialogSession.user_id)
        .where(DialogSession.status == DIALOG_COMPLETED)
        .group_by(User.source, DialogSession.task, recommendation)
    )
    if since is not None:
        completed = completed.where(DialogSession.completed_at >= since)
    for source, task, rec, n in await session.execute(completed):
        result.add(source=source, task=task, gpu=gpu_of(rec), counts=Counts(completed=int(n)))

    leads = select(
        Lead.source,
        Lead.delivery_status,
        Lead.summary,
        Lead.request,
        DialogSession.task,
        DialogSession.result_summary,
        Lead.created_at,
        Lead.claimed_at,
    ).outerjoin(DialogSession, DialogSession.id == Lead.dialog_id)
    if since is not None:
        leads = leads.where(Lead.created_at >= since)
    rows = await session.execute(leads)
    for source, status, summary, request, dialog_task, dialog_summary, created, claimed in rows:
        counts = lead_counts(status, created, claimed)
        result.add(
            source=source,
            task=lead_task(summary, request, dialog_task),
            gpu=lead_gpu(summary, dialog_summary),
            counts=counts,
        )
    return result


def lead_counts(status: str, created_at: datetime, claimed_at: datetime | None) -> Counts:
    """One lead's counts: delivered or not, claimed and how long that took."""
    waited = () if claimed_at is None else (max((claimed_at - created_at).total_seconds(), 0.0),)
    return Counts(
        leads=1,
        pending=int(status == LEAD_PENDING),
        failed=int(status == LEAD_FAILED),
        claimed=int(claimed_at is not None),
        claim_seconds=waited,
    )


def week_of(moment: datetime) -> str:
    """The ISO week of a moment: "2026-W49"."""
    year, week, _ = moment.isocalendar()
    return f"{year}-W{week:02d}"


async def weekly(
    session: AsyncSession, now: datetime | None = None, weeks: int = WEEKS_SHOWN
) -> dict[str, Counts]:
    """Completed dialogs and leads (claimed, time to claim) per ISO week, the last ``weeks``
    weeks, newest first (a week with neither is listed too: a quiet week is news)."""
    now = now or utc_now()
    monday = (now - timedelta(days=now.weekday())).replace(hour=0, minute=0, second=0, microsecond=0)
    since = monday - timedelta(weeks=weeks - 1)
    table = {week_of(since + timedelta(weeks=i)): Counts() for i in reversed(range(weeks))}
    completed = select(DialogSession.completed_at).where(
        DialogSession.status == DIALOG_COMPLETED, DialogSession.completed_at >= since
    )
    for (at,) in await session.execute(completed):
        if (key := week_of(at)) in table:
            table[key] += Counts(completed=1)
    leads = select(Lead.delivery_status, Lead.created_at, Lead.claimed_at).where(Lead.created_at >= since)
    for status, created, claimed in await session.execute(leads):
        if (key := week_of(created)) in table:
            table[key] += lead_counts(status, created, claimed)
    return table


async def report(session: AsyncSession, now: datetime | None = None) -> dict[str, Funnel]:
    """The funnel of each of ``PERIODS`` (keyed like it), up to ``now``."""
    now = now or utc_now()
    return {
        name: await funnel(session, None if span is None else now - span) for name, span in PERIODS.items()
    }


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


# --------------------------------------------------------------------------- the rows /export writes

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


__all__ = [
    "DIALOG_COLUMNS",
    "LEAD_COLUMNS",
    "PERIODS",
    "USER_COLUMNS",
    "WEEKS_SHOWN",
    "Counts",
    "Funnel",
    "dialog_rows",
    "funnel",
    "gpu_of",
    "lead_rows",
    "ranked",
    "report",
    "user_rows",
    "users_from",
    "week_of",
    "weekly",
]
