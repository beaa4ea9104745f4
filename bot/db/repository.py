"""All database access of the bot. Functions never commit: the caller's transaction commits.

The dialog writes of an update's unit of work (given an `UpdateWork` instead of a session) are
appended to it, not executed: they commit with its done mark (bot.db.work)."""

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import cache, partial
from typing import Any, cast

from sqlalchemy import Table, bindparam, case, delete, func, insert, or_, select, text, update
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Session
from sqlalchemy.sql.dml import Update

from bot.db import upserts
from bot.db.models import (
    DIALOG_ABANDONED,
    DIALOG_COMPLETED,
    DIALOG_STARTED,
    Base,
    DialogSession,
    ProcessedUpdate,
    User,
    utc_now,
)
from bot.db.work import DialogAbandon, DialogInsert, DialogOp, DialogWrite, UpdateWork
from core.language.words import LANGUAGES

log = logging.getLogger(__name__)

UPDATES = upserts.UPDATES
RECEIVED = ("bot_id", "update_id", "created_at", "payload", "lease_until")
FINISHED = ("bot_id", "update_id", "created_at")
CONFLICT = ("bot_id", "update_id")
DIALOGS = cast(Table, DialogSession.__table__)


@dataclass(frozen=True)
class SourceRow:
    """Deep-link source funnel: how many users came, started and completed a dialog."""

    source: str | None
    users: int
    dialogs_started: int
    dialogs_completed: int


async def get_user(session: AsyncSession, telegram_id: int) -> User | None:
    return await session.scalar(select(User).where(User.telegram_id == telegram_id))


async def upsert_user(
    session: AsyncSession,
    *,
    telegram_id: int,
    username: str | None,
    first_name: str | None,
    telegram_language: str | None,
    source: str | None,
) -> User:
    """Create the user on first contact (recording the deep-link source), else refresh what Telegram says.

    One statement (INSERT … ON CONFLICT DO UPDATE … RETURNING): two first updates of one user racing
    each other create one row, with the source of whichever came first (a conflict keeps the source).
    """
    seen = SeenUser(telegram_id, username, first_name, telegram_language, source)
    return (await upsert_users(session, [seen]))[0]


@dataclass(frozen=True)
class SeenUser:
    """What an update says of its sender, and the deep-link source it came with (`upsert_users`)."""

    telegram_id: int
    username: str | None
    first_name: str | None
    telegram_language: str | None
    source: str | None


async def upsert_users(session: AsyncSession, users: Sequence[SeenUser]) -> list[User]:
    """`upsert_user` for several users in one statement (each telegram id once), their rows in order."""
    now = utc_now()
    rows = [
        {"telegram_id": user.telegram_id, "source": user.source, "created_at": now,
         "username": user.username, "first_name": user.first_name,
         "language_from_telegram": user.telegram_language, "last_seen_at": now,
         "referred_by": referrer_of(user.source, user.telegram_id)}
        for user in users
    ]  # fmt: skip
    # The statement is SQL text built once (bot.db.upserts): an ORM ``insert(User)…returning(User)``
    # is compiled again on every call, 1-3 ms of CPU, and every user of a crowd is new.
    statement = upserts.upsert(
        upserts.USERS, USER_INSERTED, ("telegram_id",), set_=USER_REFRESHED, rows=len(rows),
        returning=USER_COLUMNS,
    )  # fmt: skip
    result = await session.execute(statement, upserts.params(USER_INSERTED, rows))
    written = {row.telegram_id: row for row in result}
    # Not attached to the session: the update path reads its user (id, language), never changes it
    # through the ORM (bot.i18n sets the language with an UPDATE and in this copy).
    return [User(**written[user.telegram_id]._mapping) for user in users]


USER_INSERTED = ("telegram_id", "source", "created_at", "username", "first_name", "language_from_telegram",
                 "last_seen_at", "referred_by")  # fmt: skip
REFERRAL_PREFIX = "ref_"
"""A personal link's source: `ref_<telegram id>` of the user who shared it (/ref)."""
MAX_TELEGRAM_ID = 2**63 - 1  # BIGINT


def referral_source(telegram_id: int) -> str:
    return f"{REFERRAL_PREFIX}{telegram_id}"


def referrer_of(source: str | None, telegram_id: int) -> int | None:
    """Who brought a user whose first contact came with `source`: the id of `ref_<id>`; None for
    another source, a malformed id, or the user's own link."""
    if not source or not source.startswith(REFERRAL_PREFIX):
        return None
    digits = source.removeprefix(REFERRAL_PREFIX)
    if not digits.isascii() or not digits.isdigit() or len(digits) > 19:
        return None
    referrer = int(digits)
    return referrer if 0 < referrer <= MAX_TELEGRAM_ID and referrer != telegram_id else None


async def referred_count(session: AsyncSession, telegram_id: int) -> int:
    """How many users this user's personal link brought."""
    brought = select(func.count()).select_from(User).where(User.referred_by == telegram_id)
    count = await session.scalar(brought)
    return int(count or 0)


async def set_currency(session: AsyncSession, telegram_id: int, currency: str) -> None:
    await session.execute(update(User).where(User.telegram_id == telegram_id).values(currency=currency))


USER_REFRESHED = {
    column: f"excluded.{column}"
    for column in ("username", "first_name", "language_from_telegram", "last_seen_at")
}
USER_COLUMNS = tuple(column.name for column in upserts.USERS.columns)


async def set_language(session: AsyncSession, telegram_id: int, lang: str) -> None:
    if lang not in LANGUAGES:
        raise ValueError(f"unsupported language {lang!r}; expected one of {LANGUAGES}")
    await session.execute(update(User).where(User.telegram_id == telegram_id).values(language=lang))


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


async def write_dialogs(session: AsyncSession, writes: Sequence[DialogOp]) -> None:
    """Dialog writes of units of work: one executemany per kind (and per set of columns updated)."""
    await session.run_sync(_write_dialogs, writes)


def _write_dialogs(session: Session, writes: Sequence[DialogOp]) -> None:
    """Abandons first, then new rows, then updates: the order in which one update's writes of its
    own rows commute (an abandon only touches started rows; an abandon deferred after a new row of
    its owner has marked that row already, `abandon_dialogs`; updates never set a row started). The
    writes of several updates touch different users' rows (one user's updates never share a group)."""
    abandons = [write.params for write in writes if isinstance(write, DialogAbandon)]
    if abandons:
        session.execute(_ABANDON, abandons)
    inserts = [write.row for write in writes if isinstance(write, DialogInsert)]
    if inserts:
        session.execute(_NEW_DIALOGS, inserts)
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
        found = session.execute(_dialog_update(columns), rows).rowcount  # type: ignore[attr-defined]
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
    """`finish_update` for several updates, in one statement."""
    now = utc_now()
    rows = [{"bot_id": bot_id, "update_id": update_id, "created_at": now} for update_id in update_ids]
    await session.execute(
        upserts.upsert(
            UPDATES, FINISHED, CONFLICT, set_={"payload": "NULL", "lease_until": "NULL"}, rows=len(rows)
        ),
        upserts.params(FINISHED, rows),
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
    """Keep owning the pending updates in hand (bot.db.inbox's heartbeat): one statement; how many."""
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


async def source_report(session: AsyncSession) -> list[SourceRow]:
    """Per first-seen source (None: came without a link): users, their dialogs started and completed.

    Dialogs count towards the source that brought the user, which is what a sales link is credited with.
    """
    dialogs = (
        select(
            DialogSession.user_id,
            func.count().label("started"),
            func.sum(case((DialogSession.status == DIALOG_COMPLETED, 1), else_=0)).label("completed"),
        )
        .group_by(DialogSession.user_id)
        .subquery()
    )
    users = func.count(User.id)
    rows = await session.execute(
        select(
            User.source,
            users,
            func.coalesce(func.sum(dialogs.c.started), 0),
            func.coalesce(func.sum(dialogs.c.completed), 0),
        )
        .outerjoin(dialogs, dialogs.c.user_id == User.id)
        .group_by(User.source)
        .order_by(users.desc(), User.source.asc().nulls_last())
    )
    return [
        SourceRow(source, int(n_users), int(started), int(completed))
        for source, n_users, started, completed in rows
    ]


def dialect_insert(session: AsyncSession, model: type[Base]) -> Any:
    """INSERT with ON CONFLICT support, in the dialect of the session's database."""
    dialect = session.get_bind().dialect.name
    if dialect == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as postgresql_insert  # ~0.2 s: only when used

        return postgresql_insert(model)
    if dialect == "sqlite":
        return sqlite_insert(model)
    raise NotImplementedError(f"only SQLite and PostgreSQL are supported, not {dialect}")
