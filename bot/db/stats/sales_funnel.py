"""The sales funnel: per link source, task and recommended GPU, per period and per ISO week.

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
