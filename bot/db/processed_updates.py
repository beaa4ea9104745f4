"""The inbox's statements on ``processed_updates`` (bot.db.inbox): record received updates as
pending, take them over and renew their leases, mark them handled, prune old de-duplication rows.
Functions never commit: the caller's transaction commits."""

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, delete, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Session

from bot.db import upserts
from bot.db.models import ProcessedUpdate, utc_now
from bot.db.upserts import dialect_insert

UPDATES = upserts.UPDATES
RECEIVED = ("bot_id", "update_id", "created_at", "payload", "lease_until")
FINISHED = ("bot_id", "update_id", "created_at")
CONFLICT = ("bot_id", "update_id")


async def claim_update(session: AsyncSession, *, bot_id: int, update_id: int) -> bool:
    """Record the update as processed; False if it already was (a repeated delivery)."""
    values = {"bot_id": bot_id, "update_id": update_id, "created_at": utc_now()}
    # The unique (bot_id, update_id) decides; on PostgreSQL a concurrent claim waits for the first to end.
    result = await session.execute(
        dialect_insert(session, ProcessedUpdate).values(values).on_conflict_do_nothing()
    )
    return bool(result.rowcount)  # type: ignore[attr-defined]


async def receive_updates(
    session: AsyncSession,
    *,
    bot_id: int,
    updates: Sequence[tuple[int, dict[str, Any]]],
    lease_until: datetime,
) -> set[int]:
    """Record received updates (id, raw payload) as pending, owned until ``lease_until``; returns the ids
    that are new. An id already recorded (handled, or pending in someone's hands) is a repeated delivery."""
    if not updates:
        return set()
    now = utc_now()
    rows = [
        {"bot_id": bot_id, "update_id": update_id, "created_at": now, "payload": payload,
         "lease_until": lease_until}
        for update_id, payload in updates
    ]  # fmt: skip
    result = await session.execute(
        upserts.upsert(UPDATES, RECEIVED, CONFLICT, rows=len(rows), returning="update_id"),
        upserts.params(RECEIVED, rows),
    )
    return set(result.scalars())


async def update_is_handled(session: AsyncSession, *, bot_id: int, update_id: int) -> bool:
    """Whether the update was handled already (recorded without a pending payload)."""
    payload = await session.execute(
        select(ProcessedUpdate.payload).where(
            ProcessedUpdate.bot_id == bot_id, ProcessedUpdate.update_id == update_id
        )
    )
    row = payload.one_or_none()
    return row is not None and row.payload is None


async def finish_update(session: AsyncSession, *, bot_id: int, update_id: int) -> None:
    """Mark the update handled: its row stays for de-duplication, its payload goes (inserted when the
    inbox could not record it)."""
    await finish_updates(session, bot_id=bot_id, update_ids=[update_id])


async def finish_updates(session: AsyncSession, *, bot_id: int, update_ids: Sequence[int]) -> None:
    """`finish_update` for several updates, in one statement (`mark_finished`)."""
    await session.run_sync(mark_finished, bot_id=bot_id, update_ids=update_ids)


def mark_finished(db: Session | Connection, *, bot_id: int, update_ids: Sequence[int]) -> None:
    """`finish_updates` in a transaction the caller holds (the writer's): one row's statement,
    executed for each (one text for any group size, compiled once; a statement of N rows would be
    built and compiled for each new N)."""
    now = utc_now()
    rows = [{"bot_id": bot_id, "update_id": update_id, "created_at": now} for update_id in update_ids]
    db.execute(
        upserts.upsert(UPDATES, FINISHED, CONFLICT, set_={"payload": "NULL", "lease_until": "NULL"}),
        [upserts.params(FINISHED, [row]) for row in rows],
    )


async def take_pending_updates(
    session: AsyncSession, *, bot_id: int, lease_until: datetime, expired_before: datetime | None
) -> list[tuple[int, dict[str, Any]]]:
    """Take over pending updates, oldest first, owning them until ``lease_until``: all of them
    (``expired_before=None``: the only consumer starting) or those whose lease ran out before then."""
    condition = [ProcessedUpdate.bot_id == bot_id, ProcessedUpdate.payload.is_not(None)]
    if expired_before is not None:
        condition.append(
            or_(ProcessedUpdate.lease_until.is_(None), ProcessedUpdate.lease_until < expired_before)
        )
    result = await session.execute(
        update(ProcessedUpdate)
        .where(*condition)
        .values(lease_until=lease_until)
        .returning(ProcessedUpdate.update_id, ProcessedUpdate.payload)
    )
    return sorted((int(update_id), dict(payload)) for update_id, payload in result)


async def renew_leases(
    session: AsyncSession, *, bot_id: int, update_ids: Sequence[int], lease_until: datetime
) -> int:
    """Keep owning the pending updates in hand (bot.db.inbox_dispatcher's heartbeat): one statement;
    how many."""
    result = await session.execute(
        update(ProcessedUpdate)
        .where(
            ProcessedUpdate.bot_id == bot_id,
            ProcessedUpdate.update_id.in_(update_ids),
            ProcessedUpdate.payload.is_not(None),
        )
        .values(lease_until=lease_until)
    )
    return int(result.rowcount)  # type: ignore[attr-defined]


async def pending_update_ids(session: AsyncSession, *, bot_id: int) -> list[int]:
    """Updates received and not yet handled, oldest first."""
    rows = await session.scalars(
        select(ProcessedUpdate.update_id)
        .where(ProcessedUpdate.bot_id == bot_id, ProcessedUpdate.payload.is_not(None))
        .order_by(ProcessedUpdate.update_id)
    )
    return [int(update_id) for update_id in rows]


async def forget_processed_updates(session: AsyncSession, *, before: datetime) -> int:
    """Drop de-duplication records older than ``before`` (Telegram stops redelivering after a day);
    pending updates stay until handled."""
    result = await session.execute(
        delete(ProcessedUpdate).where(ProcessedUpdate.created_at < before, ProcessedUpdate.payload.is_(None))
    )
    return int(result.rowcount)  # type: ignore[attr-defined]
