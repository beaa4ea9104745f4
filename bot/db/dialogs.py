"""The dialog rows: a user's dialogs opened, answered, completed and abandoned, and the ids of new
rows (`DialogIds`, `SequenceIds`). Functions never commit: the caller's transaction commits.

The dialog writes of an update's unit of work (given an `UpdateWork` instead of a session) are
appended to it, not executed: they commit with its done mark (bot.db.work)."""

import logging
from collections.abc import Sequence
from functools import cache, partial
from typing import Any, cast

from sqlalchemy import Connection, Table, bindparam, delete, func, insert, select, text, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Session
from sqlalchemy.sql.dml import Update

from bot.db.models import DIALOG_ABANDONED, DIALOG_COMPLETED, DIALOG_STARTED, DialogSession, User, utc_now
from bot.db.work import DialogAbandon, DialogInsert, DialogOp, DialogWrite, UpdateWork

log = logging.getLogger(__name__)

DIALOGS = cast(Table, DialogSession.__table__)


async def start_dialog(
    db: AsyncSession | UpdateWork, *, telegram_id: int, task: str, source: str | None = None,
    user_id: int | None = None,
) -> int:  # fmt: skip
    """Open a new dialog for the user; their unfinished ones count as abandoned from now on.

    The dialog statements are Core statements on the table, not the ORM's unit of work: the update
    path writes a row and never reads it back as an object. Given an update's work that hands out
    ids (`DialogIds`), the row gets its id now and is inserted with the work; else it is inserted at
    once (the database gives the id)."""
    if user_id is None:  # ``user_id``: the caller has the user's row already (bot.db.middleware)
        user_id = await _user_id(db, telegram_id)
    if user_id is None:
        raise LookupError(f"no user with telegram_id={telegram_id}; upsert_user first")
    now = utc_now()
    row: dict[str, Any] = {
        "user_id": user_id, "task": task, "answers": {}, "source": source, "status": DIALOG_STARTED,
        "created_at": now, "updated_at": now,
    }  # fmt: skip
    if isinstance(db, UpdateWork) and db.dialog_ids is not None:
        await abandon_dialogs(db, telegram_id, user_id=user_id)
        row["id"] = new_id = await db.read(db.dialog_ids.next)
        db.dialogs.append(DialogInsert(row))
        return new_id
    if isinstance(db, UpdateWork):  # inserted at once: the abandons it would have waited for too
        owner = user_id
        db.dialogs[:] = [
            op for op in db.dialogs if not (isinstance(op, DialogAbandon) and op.params["owner"] == owner)
        ]
        dialog_id = await db.write(_abandon_and_insert, row)
        db.undo.append(partial(_delete_dialog, dialog_id))  # the update failed: no dialog of it
        return dialog_id
    return await _abandon_and_insert(db, row)


async def _delete_dialog(dialog_id: int, session: AsyncSession) -> None:
    await session.execute(delete(DIALOGS).where(DIALOGS.c.id == dialog_id))


async def _abandon_and_insert(session: AsyncSession, row: dict[str, Any]) -> int:
    """The owner's started dialogs abandoned, then the new one: in this order, in one transaction."""
    await session.execute(_ABANDON, {"owner": row["user_id"], "now": row["created_at"]})
    dialog_id = await session.scalar(_NEW_DIALOG, row)
    assert dialog_id is not None, "inserted above"
    return int(dialog_id)


async def _user_id(db: AsyncSession | UpdateWork, telegram_id: int) -> int | None:
    statement = select(User.id).where(User.telegram_id == telegram_id)
    if isinstance(db, UpdateWork):
        return await db.read(_scalar, statement)
    return await db.scalar(statement)


async def _scalar(session: AsyncSession, statement: Any) -> Any:
    return await session.scalar(statement)


class DialogIds:
    """Ids of new dialog rows, handed out by this process, so that a new row can wait for the group
    commit like the updates of rows (bot.db.group_commit): a dialog opened by a button press (the
    task step) then costs no statement, transaction or wait for SQLite's connection of its own.

    Only where one process owns the database (the embedded SQLite: bot.db.middleware's
    ``single_process``), as for the rows and records it keeps in memory: nobody else inserts dialogs
    meanwhile. The first id follows the largest one on disk (read once); an id whose row was rolled
    back is not reused, which leaves a gap and nothing else."""

    def __init__(self) -> None:
        self._last: int | None = None

    async def load(self, session: AsyncSession) -> None:
        """Read the largest id on disk, once (the inbox's receipt does, bot.db.arrivals: it holds the
        connection anyway)."""
        if self._last is None:
            largest = await session.scalar(select(func.max(DIALOGS.c.id)))
            if self._last is None:  # another task may have read it meanwhile, and taken ids
                self._last = int(largest or 0)

    async def next(self, session: AsyncSession) -> int:
        await self.load(session)
        assert self._last is not None, "loaded above"
        self._last += 1
        return self._last


class SequenceIds(DialogIds):
    """`DialogIds` where several processes insert dialogs (PostgreSQL): each id is taken from the
    table's own sequence (``nextval``: never handed out twice, whoever asks), so a new row can wait
    for the update's commit there too."""

    async def load(self, session: AsyncSession) -> None:
        """Nothing to read ahead: the sequence hands out each id when asked."""

    async def next(self, session: AsyncSession) -> int:
        taken = await session.scalar(text("SELECT nextval(pg_get_serial_sequence('dialog_sessions', 'id'))"))
        return int(taken)


# The update path's dialog statements are built once, with bind parameters: SQLAlchemy builds and
# keys a statement made per call again every time (half of a one-row UPDATE's CPU, measured).
_NEW_DIALOG = insert(DIALOGS).returning(DIALOGS.c.id)
_NEW_DIALOGS = insert(DIALOGS)  # deferred ones, their ids given (DialogIds)
_ABANDON = (
    update(DIALOGS)
    .where(DIALOGS.c.user_id == bindparam("owner"), DIALOGS.c.status == DIALOG_STARTED)
    .values(status=DIALOG_ABANDONED, updated_at=bindparam("now"))
)


@cache
def _dialog_update(columns: tuple[str, ...]) -> Update:
    """UPDATE of these columns of one dialog (bind parameters ``dialog_id`` and ``v_{column}``: a
    bind parameter may not be named like a column it sets)."""
    return (
        update(DIALOGS)
        .where(DIALOGS.c.id == bindparam("dialog_id"))
        .values({column: bindparam(f"v_{column}") for column in columns})
    )


async def save_answers(db: AsyncSession | UpdateWork, dialog_id: int, answers: dict[str, Any]) -> None:
    await _update_dialog(db, dialog_id, answers=dict(answers), updated_at=utc_now())


async def complete_dialog(
    db: AsyncSession | UpdateWork,
    dialog_id: int,
    *,
    answers: dict[str, Any],
    summary: dict[str, Any],
    verdict: str | None,
    offer_id: str | None,
    offer_shown: str | None = None,
) -> None:
    """``offer_shown``: the offer whose rent button the result showed (None: the contact button)."""
    now = utc_now()
    await _update_dialog(
        db, dialog_id, answers=dict(answers), result_summary=dict(summary), verdict=verdict,
        offer_id=offer_id, offer_shown=offer_shown, status=DIALOG_COMPLETED, completed_at=now,
        updated_at=now,
    )  # fmt: skip


async def _update_dialog(db: AsyncSession | UpdateWork, dialog_id: int, **values: Any) -> None:
    write = DialogWrite(
        tuple(values), {"dialog_id": dialog_id, **{f"v_{column}": value for column, value in values.items()}}
    )
    if isinstance(db, UpdateWork):
        db.dialogs.append(write)
        return
    result = await db.execute(_dialog_update(write.columns), write.params)
    if not result.rowcount:  # type: ignore[attr-defined]
        raise LookupError(f"no dialog session with id={dialog_id}")


def write_dialogs(db: Session | Connection, writes: Sequence[DialogOp]) -> None:
    """Dialog writes of units of work, in a transaction the caller holds (the writer's): one
    executemany per kind (and per set of columns updated). Abandons first, then new rows, then
    updates: the order in which one update's writes of its own rows commute (an abandon only touches
    started rows; an abandon deferred after a new row of its owner has marked that row already,
    `abandon_dialogs`; updates never set a row started). The writes of several updates touch
    different users' rows (one user's updates never share a group)."""
    abandons = [write.params for write in writes if isinstance(write, DialogAbandon)]
    if abandons:
        db.execute(_ABANDON, abandons)
    inserts = [write.row for write in writes if isinstance(write, DialogInsert)]
    if inserts:
        db.execute(_NEW_DIALOGS, inserts)
    # A row written twice takes both writes in order, merged: the same row as two UPDATEs leave.
    merged: dict[int, dict[str, Any]] = {}
    for write in writes:
        if isinstance(write, DialogWrite):
            merged.setdefault(write.params["dialog_id"], {}).update(write.params)
    by_columns: dict[tuple[str, ...], list[dict[str, Any]]] = {}
    for params in merged.values():
        columns = tuple(sorted(key[2:] for key in params if key.startswith("v_")))
        by_columns.setdefault(columns, []).append(params)
    for columns, rows in by_columns.items():
        found = db.execute(_dialog_update(columns), rows).rowcount  # type: ignore[attr-defined]
        if found not in (len(rows), -1):  # -1: not known (asyncpg's executemany does not count)
            # Cannot happen: a row is updated by the update that knows its id. Said, not raised:
            # the other updates' rows in the statement are written.
            log.error("dialog update: %d of %d rows found", found, len(rows))


async def abandon_dialogs(
    db: AsyncSession | UpdateWork, telegram_id: int, *, user_id: int | None = None
) -> int | None:
    """Mark the user's unfinished dialogs abandoned; returns how many (None: appended to the
    update's work, and not counted)."""
    if user_id is None:
        user_id = await _user_id(db, telegram_id)
        if user_id is None:
            return 0
    params = {"owner": user_id, "now": utc_now()}
    if isinstance(db, UpdateWork):
        for write in db.dialogs:  # the owner's rows new in this work are started ones too
            row = write.row if isinstance(write, DialogInsert) else None
            if row is not None and row["user_id"] == user_id and row["status"] == DIALOG_STARTED:
                row.update(status=DIALOG_ABANDONED, updated_at=params["now"])
        db.dialogs.append(DialogAbandon(params))
        return None
    result = await db.execute(_ABANDON, params)
    return int(result.rowcount)  # type: ignore[attr-defined]


async def list_dialogs(session: AsyncSession, telegram_id: int) -> list[DialogSession]:
    """The user's dialogs, oldest first."""
    rows = await session.scalars(
        select(DialogSession)
        .join(User)
        .where(User.telegram_id == telegram_id)
        .order_by(DialogSession.created_at, DialogSession.id)
    )
    return list(rows)
