"""The writer: finished updates' units of work (bot.db.work) committed together, in one transaction.

An update's work (its FSM records, its dialog rows' writes) and its done mark are written after its
handler returned, i.e. after its last Telegram call. An update that wrote nothing in its own session
hands its work here: the works of every update finishing meanwhile go into one transaction, one
statement per kind of row (executemany). The update awaits its group as it would its own commit: it
is finished only once the group is on disk; a failed group fails every update in it, and none of
its works is remembered (memory takes a work only once committed). One user's updates never share
a group: the user's lock is held until the update's group is on disk. The contract:
docs/persistence.md.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import Connection, delete
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker
from sqlalchemy.orm import Session

from bot.db import processed_updates, upserts
from bot.db.dialogs import write_dialogs
from bot.db.models import FsmRecord, utc_now
from bot.db.work import Record, UpdateWork

MAX_GROUP = 500
"""Updates per group at most (the marks' statement has 3 bind parameters each: far below SQLite's
and PostgreSQL's limits)."""


@dataclass
class _Waiting:
    work: UpdateWork
    done: asyncio.Future[None]


class GroupCommit:
    """The works waiting for the next group commit, and the task writing them."""

    def __init__(self, sessionmaker: async_sessionmaker[AsyncSession]) -> None:
        engine = sessionmaker.kw.get("bind")
        if not isinstance(engine, AsyncEngine):
            raise TypeError("the group commit writes through the sessions' engine: bind them to one")
        self.engine = engine
        self._waiting: list[_Waiting] = []
        self._writer: asyncio.Task[None] | None = None

    async def finish(self, work: UpdateWork) -> None:
        """Write ``work`` and its update's done mark; returns once committed (raises what the commit
        raised)."""
        done = asyncio.get_running_loop().create_future()
        self._waiting.append(_Waiting(work, done))
        if self._writer is None:
            self._writer = asyncio.create_task(self._write(), name="group-commit")
        await done

    async def _write(self) -> None:
        group: list[_Waiting] = []
        try:
            while self._waiting:
                group = []
                try:
                    # The group is what waits once a connection is ours (SQLite's one, which the
                    # receipt may hold): whatever came in meanwhile goes along. A connection, not an
                    # ORM session: the writer runs statements, and needs none of a session's
                    # bookkeeping (a third of a small group's cost: bench/README.md).
                    async with self.engine.begin() as connection:
                        group, self._waiting = self._waiting[:MAX_GROUP], self._waiting[MAX_GROUP:]
                        await connection.run_sync(write_works_now, [waiting.work for waiting in group])
                except Exception as e:
                    _settle(group, e)
                    continue
                for finished in group:
                    finished.work.done()
                _settle(group, None)
        finally:
            self._writer = None
            # cancelled (the loop closing): whoever still waits is cancelled too, their writes unsure
            left, self._waiting = self._waiting, []
            _settle(group + left, asyncio.CancelledError())


async def write_works(session: AsyncSession, works: Sequence[UpdateWork], *, mark: bool = True) -> None:
    """`write_works_now` in ``session``'s transaction (the caller commits, then calls each work's
    `UpdateWork.done`)."""
    await session.run_sync(write_works_now, works, mark=mark)


def write_works_now(db: Session | Connection, works: Sequence[UpdateWork], *, mark: bool = True) -> None:
    """The works' dialog writes, FSM records and (``mark``) done marks, in the transaction ``db``
    holds: one executemany per kind of row."""
    dialogs = [op for work in works for op in work.dialogs]
    if dialogs:
        write_dialogs(db, dialogs)
    records = [item for work in works for item in work.fsm.items()]
    if records:
        store_records(db, records)
    by_bot: dict[int, list[int]] = {}
    for work in works if mark else ():
        by_bot.setdefault(work.bot_id, []).append(work.update_id)
    for bot_id, update_ids in by_bot.items():
        # Each id once: one statement may not upsert a row twice (PostgreSQL refuses it).
        processed_updates.mark_finished(db, bot_id=bot_id, update_ids=list(dict.fromkeys(update_ids)))


def store_records(db: Session | Connection, records: list[tuple[str, Record]]) -> None:
    """Write these FSM records: one DELETE for those left with neither state nor data (as aiogram
    deletes them), one executemany upsert for the others."""
    gone = [record_key for record_key, (state, data) in records if state is None and not data]
    if gone:
        db.execute(delete(FsmRecord).where(FsmRecord.key.in_(gone)))
    now = utc_now()
    rows = [
        upserts.params(FSM_COLUMNS, [{"key": key, "state": state, "data": data, "updated_at": now}])
        for key, (state, data) in records
        if state is not None or data
    ]
    if rows:
        db.execute(upserts.upsert(upserts.FSM, FSM_COLUMNS, ("key",), set_=FSM_SET), rows)


FSM_COLUMNS = ("key", "state", "data", "updated_at")
FSM_SET = {column: f"excluded.{column}" for column in FSM_COLUMNS[1:]}


def _settle(group: list[_Waiting], error: BaseException | None) -> None:
    for waiting in group:
        done = waiting.done
        if done.done():
            continue
        if error is None:
            done.set_result(None)
        elif isinstance(error, asyncio.CancelledError):
            done.cancel()
        else:
            done.set_exception(error)
